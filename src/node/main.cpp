// barrel-node: everything happens in barrel::cli::run, which the tests drive directly.

#include <barrel/cli/cli.hpp>

#include <iostream>
#include <string_view>
#include <vector>

int main(int argc, char** argv) {
    std::ios::sync_with_stdio(false);
    const std::vector<std::string_view> args(argv + (argc > 0 ? 1 : 0), argv + argc);
    return barrel::cli::run(args, std::cin, std::cout, std::cerr);
}
