// Base64 as CometBFT's JSON carries bytes (core/base64.hpp), against RFC 4648's test vectors.

#include <barrel/core/base64.hpp>

#include <gtest/gtest.h>

#include <string>

using namespace barrel;

TEST(core_base64, rfc4648_vectors) {
    EXPECT_EQ(base64(""), "");
    EXPECT_EQ(base64("f"), "Zg==");
    EXPECT_EQ(base64("fo"), "Zm8=");
    EXPECT_EQ(base64("foo"), "Zm9v");
    EXPECT_EQ(base64("foob"), "Zm9vYg==");
    EXPECT_EQ(base64("fooba"), "Zm9vYmE=");
    EXPECT_EQ(base64("foobar"), "Zm9vYmFy");
}

TEST(core_base64, every_digit_and_binary_bytes) {
    EXPECT_EQ(base64(std::string{"\xff\xfe\x00", 3}), "//4A");
    EXPECT_EQ(base64(Bytes{0xfb, 0xff, 0xbf}), "+/+/");
    Bytes all(256);
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint8_t>(i);
    const std::string text = base64(all);
    EXPECT_EQ(text.size(), 344u);  // 256 bytes: 85 groups of three and one of one
    EXPECT_EQ(text.substr(0, 8), "AAECAwQF");
    EXPECT_EQ(text.substr(336), "/P3+/w==");
}
