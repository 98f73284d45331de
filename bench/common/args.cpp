#include "args.hpp"

#include <barrel/version/version.hpp>

#include "options/bound_options.hpp"
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <thread>

namespace barrel::bench {

void usage_error(const std::string& msg) { throw Failure{2, msg}; }

void fail(const std::string& msg) { throw Failure{1, msg}; }

void parse_command_line(CLI::App& app, int argc, char** argv) {
    const std::string version = version::describe(app.get_name());
    app.set_version_flag("--version", version,
                         "Print the version, commit, compiler and build type");
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
        std::cout << app.help();
        std::exit(0);
    } catch (const CLI::CallForVersion&) {
        std::cout << version << std::flush;
        std::exit(0);
    } catch (const CLI::ArgumentMismatch& e) {
        usage_error(options::mismatch_message(app, e));  // as barrel-node says it
    } catch (const CLI::ParseError& e) {
        usage_error(e.what());
    }
    if (const auto extra = app.remaining(); !extra.empty()) {
        const std::string& word = extra.front();
        usage_error((word.starts_with("-") ? "unknown option " : "unexpected argument ") + word);
    }
}

int guarded_main(const std::function<int()>& run) {
    std::signal(SIGXFSZ, SIG_IGN);
    try {
        return run();
    } catch (const Failure& f) {
        std::cerr << "error: " << f.message << "\n";
        return f.status;
    } catch (const io::WriteError& e) {
        std::cerr << "error: " << e.what() << "\n";
        return 2;
    }
}

std::optional<io::AtomicFile> create_output(const std::string& option, const std::string& path) {
    if (path.empty()) return std::nullopt;
    auto file = io::AtomicFile::create(path, std::cout);
    if (!file) usage_error(option + ": " + file.error());
    return std::move(file).value();
}

double peak_rss_mib() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_maxrss) / 1024.0;
}

nlohmann::json machine_info(size_t threads) {
    std::string cpu;
    std::ifstream info("/proc/cpuinfo");
    for (std::string line; std::getline(info, line);)
        if (line.rfind("model name", 0) == 0) {
            cpu = line.substr(line.find(':') + 2);
            break;
        }
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    return {{"cpu", cpu},
            {"cores", std::thread::hardware_concurrency()},
            {"threads_used", threads},
            {"hostname", host}};
}

}  // namespace barrel::bench
