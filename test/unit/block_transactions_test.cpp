// block::Transactions: the public face of decode's internal storage, which a block assembled by
// hand appends to and which moves without copying its elements.

#include <barrel/block/block.hpp>

#include <gtest/gtest.h>

#include <utility>

namespace barrel::block {
namespace {

tx::Transaction with_nonce(uint64_t nonce) {
    tx::Transaction t;
    t.nonce = nonce;
    return t;
}

TEST(block_transactions, push_back_and_clear) {
    Transactions txs;
    EXPECT_TRUE(txs.empty());
    EXPECT_EQ(txs.begin(), txs.end());
    for (uint64_t n = 0; n < 9; ++n) txs.push_back(with_nonce(n));  // grows past its first array
    ASSERT_EQ(txs.size(), 9u);
    for (uint64_t n = 0; n < 9; ++n) EXPECT_EQ(txs[n].nonce, n);
    EXPECT_EQ(txs.back().nonce, 8u);
    EXPECT_EQ(txs.end() - txs.begin(), 9);
    txs[3].nonce = 42;  // mutable in place, as the exec tests' broken blocks need
    EXPECT_EQ(txs.data()[3].nonce, 42u);
    txs.clear();
    EXPECT_TRUE(txs.empty());
    txs.push_back(with_nonce(7));
    EXPECT_EQ(txs.size(), 1u);
}

TEST(block_transactions, a_move_takes_the_elements_and_leaves_the_source_empty) {
    Transactions a;
    a.push_back(with_nonce(1));
    a.push_back(with_nonce(2));
    const tx::Transaction* elements = a.data();
    Transactions b{std::move(a)};
    EXPECT_EQ(b.data(), elements);  // not copied
    EXPECT_EQ(b.size(), 2u);
    EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): the moved-from state is specified
    Transactions c;
    c.push_back(with_nonce(9));
    c = std::move(b);
    EXPECT_EQ(c.data(), elements);
    EXPECT_EQ(c[1].nonce, 2u);
    EXPECT_TRUE(b.empty());  // NOLINT(bugprone-use-after-move)
}

}  // namespace
}  // namespace barrel::block
