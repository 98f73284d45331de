// core/keyed_hash: the hash that keeps the DAG's and the sender cache's tables (and every
// FixedBytes-keyed unordered container) linear against keys an attacker picks. Its key is a
// secret drawn once per process, so its properties are shown across processes: this binary run
// again as a child (BARREL_KEYED_HASH_CHILD, below) hashes the same inputs under its own seed.
// Deterministic within a process, different in another; distinct hashes for distinct inputs
// (length included); every input bit changing half the hash; an even spread of the structured
// keys a sender can choose (consecutive addresses, multiples of a table size, long common
// prefixes); and keys ground to share one bucket in this process spread in another. The bounds
// are many standard deviations wide: a random seed fails them with probability below 1e-9.

#include <barrel/core/bytes.hpp>
#include <barrel/core/hex.hpp>

#include "core/keyed_hash.hpp"
#include "test_files.hpp"
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

extern char** environ;

namespace barrel {
namespace {

constexpr const char* kChildVariable = "BARREL_KEYED_HASH_CHILD";

/// In a child started by hashes_in_another_process: hashes each line (hex) of the file the
/// variable names into FILE.out, one decimal per line, and exits before any test runs.
class KeyedHashChild : public ::testing::Environment {
public:
    void SetUp() override {
        const char* path = std::getenv(kChildVariable);
        if (path == nullptr) return;
        std::ifstream in{path};
        std::ofstream out{std::string{path} + ".out"};
        for (std::string line; std::getline(in, line);) {
            const auto bytes = from_hex(line);
            if (!bytes) ::_exit(3);
            out << keyed_hash({reinterpret_cast<const char*>(bytes->data()), bytes->size()})
                << "\n";
        }
        out.close();
        ::_exit(out ? 0 : 4);
    }
};
::testing::Environment* const keyed_hash_child =
    ::testing::AddGlobalTestEnvironment(new KeyedHashChild);

/// keyed_hash of each input in a new process of this binary (another process seed).
std::vector<uint64_t> hashes_in_another_process(const std::vector<std::string>& inputs) {
    test::ScratchDir tmp;
    const std::string path = tmp / "inputs";
    {
        std::ofstream f{path};
        for (const auto& s : inputs) f << to_hex_bare(as_bytes(s)) << "\n";
    }
    const std::string variable = std::string{kChildVariable} + "=" + path;
    std::vector<char*> envp;
    for (char** e = environ; *e != nullptr; ++e) envp.push_back(*e);
    envp.push_back(const_cast<char*>(variable.c_str()));
    envp.push_back(nullptr);
    char self[] = "/proc/self/exe";
    char* argv[] = {self, nullptr};
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int null = ::open("/dev/null", O_WRONLY);
        if (null >= 0) ::dup2(null, STDOUT_FILENO);  // gtest's banner
        ::execve(self, argv, envp.data());
        ::_exit(127);
    }
    int status = 0;
    EXPECT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
    std::vector<uint64_t> out;
    std::ifstream f{path + ".out"};
    for (uint64_t h; f >> h;) out.push_back(h);
    EXPECT_EQ(out.size(), inputs.size());
    return out;
}

uint64_t hash_of(const std::string& s) { return keyed_hash(s); }

/// A 20-byte address holding `n` big-endian in its last 8 bytes (0x00…01, 0x00…02, …).
std::string address(uint64_t n) {
    std::string a(20, '\0');
    for (int i = 0; i < 8; ++i) a[19 - i] = static_cast<char>((n >> (8 * i)) & 0xff);
    return a;
}

/// Pearson's chi-square of `hashes` over 2^bits buckets, taking the bits at `shift`.
double chi_square(const std::vector<uint64_t>& hashes, int bits, int shift) {
    std::vector<size_t> count(size_t{1} << bits);
    for (uint64_t h : hashes) ++count[(h >> shift) & (count.size() - 1)];
    const double expected = static_cast<double>(hashes.size()) / static_cast<double>(count.size());
    double chi = 0;
    for (size_t c : count)
        chi += (static_cast<double>(c) - expected) * (static_cast<double>(c) - expected) / expected;
    return chi;
}

/// The most keys in one of `buckets` buckets, bucket = hash mod buckets (a power of two: the
/// low bits, as the DAG's masks and std::unordered_map's power-of-two tables use).
size_t max_bucket_load(const std::vector<uint64_t>& hashes, size_t buckets) {
    std::vector<size_t> count(buckets);
    for (uint64_t h : hashes) ++count[h % buckets];
    return *std::max_element(count.begin(), count.end());
}

TEST(core_keyed_hash, is_the_same_for_the_same_bytes_within_a_process) {
    for (const std::string& s :
         std::vector<std::string>{"", "a", "abcdefgh", "abcdefghi", std::string(100, 'x')})
        EXPECT_EQ(hash_of(s), hash_of(std::string{s}));
    // The functor of FixedBytes-keyed containers is the same hash of the bytes.
    Address a{};
    a.bytes[19] = 7;
    EXPECT_EQ(FixedBytesHasher{}(a),
              keyed_hash({reinterpret_cast<const char*>(a.data()), Address::size()}));
    EXPECT_EQ(process_seed(), process_seed());  // drawn once
}

TEST(core_keyed_hash, another_process_hashes_the_same_bytes_differently) {
    std::vector<std::string> inputs{"", "a", std::string(33, '\xff')};
    for (uint64_t n = 0; n < 1000; ++n) inputs.push_back(address(n));
    const auto first = hashes_in_another_process(inputs);
    const auto second = hashes_in_another_process(inputs);
    ASSERT_EQ(first.size(), inputs.size());
    ASSERT_EQ(second.size(), inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
        EXPECT_NE(first[i], hash_of(inputs[i])) << i;
        EXPECT_NE(first[i], second[i]) << i;
    }
}

TEST(core_keyed_hash, distinct_inputs_have_distinct_hashes) {
    // 200,000 consecutive addresses: no two share a 64-bit hash.
    std::unordered_set<uint64_t> seen;
    for (uint64_t n = 0; n < 200'000; ++n)
        EXPECT_TRUE(seen.insert(hash_of(address(n))).second) << n;
    // The length is hashed: zero bytes of every length from 0 to 64 differ, and so do a string
    // and the same string with a zero byte appended (the tail is zero-padded when read).
    std::unordered_set<uint64_t> zeros;
    for (size_t len = 0; len <= 64; ++len) zeros.insert(hash_of(std::string(len, '\0')));
    EXPECT_EQ(zeros.size(), 65u);
    EXPECT_NE(hash_of(std::string{"ab", 2}), hash_of(std::string{"ab\0", 3}));
}

TEST(core_keyed_hash, every_input_bit_changes_about_half_the_hash) {
    // Each bit of each byte, in whole words and in the tail, for lengths 1 to 40. A bit changes
    // 32 of 64 on average (standard deviation 4 for one flip).
    double all = 0;
    size_t flips = 0;
    for (size_t len = 1; len <= 40; ++len) {
        std::string s(len, '\0');
        for (size_t i = 0; i < len; ++i) s[i] = static_cast<char>(i * 37 + len);
        const uint64_t base = hash_of(s);
        double changed_here = 0;
        for (size_t bit = 0; bit < len * 8; ++bit) {
            std::string t = s;
            t[bit / 8] = static_cast<char>(t[bit / 8] ^ (1 << (bit % 8)));
            const int changed = std::popcount(base ^ hash_of(t));
            ASSERT_GT(changed, 0) << "length " << len << ", bit " << bit;
            changed_here += changed;
        }
        if (len >= 4) {  // 32 flips or more: the mean within 6 standard deviations
            const double mean = changed_here / static_cast<double>(len * 8);
            EXPECT_GT(mean, 32.0 - 24.0 / std::sqrt(len * 8.0)) << "length " << len;
            EXPECT_LT(mean, 32.0 + 24.0 / std::sqrt(len * 8.0)) << "length " << len;
        }
        all += changed_here;
        flips += len * 8;
    }
    EXPECT_NEAR(all / static_cast<double>(flips), 32.0, 0.5);  // 6,560 flips: 10 deviations
}

TEST(core_keyed_hash, keys_a_sender_can_choose_spread_evenly) {
    // Structured keys that pile into one bucket under an identity or prefix hash: consecutive
    // addresses, multiples of 65,536 (equal low bits), and keys that differ only in their last
    // bytes after a 56-byte common prefix, or in two middle bytes. 65,536 of each, into 1,024
    // buckets by the low bits and by the high bits. Chi-square with 1,023 degrees of freedom:
    // mean 1,023, standard deviation 45; the bound is over 8 standard deviations.
    const auto key = [](int kind, uint64_t n) {
        switch (kind) {
            case 0: return address(n);
            case 1: return address(n << 16);
            case 2: {
                std::string s(56, 'p');
                s += static_cast<char>(n & 0xff);
                s += static_cast<char>((n >> 8) & 0xff);
                return s;
            }
            default: {
                std::string s(64, 'q');
                s[30] = static_cast<char>(n & 0xff);
                s[31] = static_cast<char>((n >> 8) & 0xff);
                return s;
            }
        }
    };
    for (int kind = 0; kind < 4; ++kind) {
        SCOPED_TRACE("key kind " + std::to_string(kind));
        std::vector<uint64_t> hashes;
        for (uint64_t n = 0; n < 65'536; ++n) hashes.push_back(hash_of(key(kind, n)));
        EXPECT_LT(chi_square(hashes, 10, 0), 1400.0);
        EXPECT_LT(chi_square(hashes, 10, 54), 1400.0);
        // 64 per bucket on average (standard deviation 8); a bucket of twice that would be a
        // table going quadratic.
        EXPECT_LT(max_bucket_load(hashes, 1024), 128u);
    }
}

TEST(core_keyed_hash, keys_ground_to_collide_in_one_process_spread_in_another) {
    // What an attacker who knew a process's seed would do: grind addresses until 64 of them share
    // bucket 0 of a 1,024-bucket table here. In another process they spread as any 64 keys do: a
    // bucket of 7 or more has a probability below 1e-9.
    std::vector<std::string> ground;
    for (uint64_t n = 0; ground.size() < 64; ++n)
        if ((hash_of(address(n)) & 1023) == 0) ground.push_back(address(n));
    std::vector<uint64_t> here;
    for (const auto& k : ground) here.push_back(hash_of(k));
    EXPECT_EQ(max_bucket_load(here, 1024), 64u);  // the grind worked
    const auto there = hashes_in_another_process(ground);
    ASSERT_EQ(there.size(), ground.size());
    EXPECT_LE(max_bucket_load(there, 1024), 6u);
}

}  // namespace
}  // namespace barrel
