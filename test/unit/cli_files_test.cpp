// The file I/O both binaries share (barrel/cli/files.hpp): the chain-file reader's split of its
// input into blocks, and the atomic writer's all-or-nothing.

#include <barrel/cli/files.hpp>

#include "rlp_build.hpp"
#include "test_files.hpp"
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace barrel;
using barrel::test::cat;

namespace {

std::vector<Bytes> read_all(const Bytes& input) {
    std::istringstream in{std::string{as_chars(input)}};
    cli::ChainReader reader{in};
    std::vector<Bytes> items;
    while (auto item = reader.next()) items.push_back(std::move(*item));
    return items;
}

/// A list item of `payload_size` bytes of 0x01 (long form from 56 on).
Bytes list_of(size_t payload_size) { return barrel::test::list({Bytes(payload_size, 0x01)}); }

}  // namespace

TEST(cli_files, chain_reader_splits_blocks_by_their_prefix) {
    // Short and long lists, one shorter than the 9 bytes the reader reads ahead.
    const std::vector<Bytes> blocks{Bytes{0xc0}, list_of(3), list_of(70), list_of(100'000),
                                    Bytes{0xc1, 0x05}};
    EXPECT_EQ(read_all(cat(blocks)), blocks);
    EXPECT_TRUE(read_all({}).empty());
}

TEST(cli_files, chain_reader_hands_on_what_is_not_a_block_whole) {
    const Bytes good = list_of(60);
    // A string, a malformed prefix, a single byte: the rest of the input is one last item, for
    // the decoder to name what is wrong with it.
    for (const Bytes& bad :
         {Bytes{0x83, 'a', 'b', 'c', 0xc0}, Bytes{0xf8, 0x05, 0xc0}, Bytes{'n', 'o', 't'}}) {
        const auto items = read_all(cat({good, bad}));
        ASSERT_EQ(items.size(), 2u);
        EXPECT_EQ(items[0], good);
        EXPECT_EQ(items[1], bad);
    }
    // A truncated last block is handed on as it is.
    const Bytes truncated(good.begin(), good.end() - 7);
    EXPECT_EQ(read_all(cat({good, truncated})), (std::vector<Bytes>{good, truncated}));
    // A length beyond any input does not allocate it.
    const Bytes huge{0xff, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xc0};
    EXPECT_EQ(read_all(huge), std::vector<Bytes>{huge});
}

TEST(cli_files, open_and_create_say_why_not) {
    const barrel::test::ScratchDir scratch;
    const std::filesystem::path& dir = scratch.path();
    const auto missing = cli::ChainReader::open((dir / "missing").string());
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().reason, "No such file or directory");
    EXPECT_FALSE(missing.error().directory);
    const auto directory = cli::read_file(dir.string());
    ASSERT_FALSE(directory);
    EXPECT_TRUE(directory.error().directory);

    EXPECT_EQ(cli::AtomicFile::create("").error(), "empty path");
    EXPECT_EQ(cli::AtomicFile::create(dir.string()).error(),
              "'" + dir.string() + "' is a directory");
    const std::string nowhere = (dir / "no" / "f").string();
    EXPECT_EQ(cli::AtomicFile::create(nowhere).error(),
              "cannot write '" + nowhere + "': No such file or directory");

    // Nothing at the target until commit; the old file until then; nothing left when abandoned.
    const std::string target = (dir / "out.bin").string();
    {
        auto file = cli::AtomicFile::create(target);
        ASSERT_TRUE(file);
        file->write(std::string_view{"abc"});
        EXPECT_FALSE(std::filesystem::exists(target));
        file->commit();
    }
    EXPECT_EQ(cli::read_file(target).value(), (Bytes{'a', 'b', 'c'}));
    {
        auto file = cli::AtomicFile::create(target);
        ASSERT_TRUE(file);
        file->write(std::string_view{"new"});
    }
    EXPECT_EQ(cli::read_file(target).value(), (Bytes{'a', 'b', 'c'}));
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator{dir},
                            std::filesystem::directory_iterator{}),
              1);
}
