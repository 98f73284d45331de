#include "resume_listener.hpp"

namespace barrel::store {

namespace {

class ResumeListener final : public rocksdb::EventListener {
public:
    explicit ResumeListener(std::shared_ptr<rocksdb::Logger> info_log)
        : m_info_log{std::move(info_log)} {}

    void OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason, rocksdb::Status bg_error,
                              bool* auto_recovery) override {
        if (!store_resumes(bg_error)) return;
        *auto_recovery = false;
        // Beside RocksDB's own "Set regular background error" line, for whoever reads the LOG
        // wondering why its SstFileManager never says "Clearing error".
        rocksdb::Log(rocksdb::InfoLogLevel::WARN_LEVEL, m_info_log,
                     "barrel: a hard background error (%s): RocksDB's own recovery off, the "
                     "store's next commit resumes the database (DB::Resume)",
                     bg_error.ToString().c_str());
    }

private:
    std::shared_ptr<rocksdb::Logger> m_info_log;
};

}  // namespace

bool store_resumes(const rocksdb::Status& bg_error) noexcept {
    // A fatal or unrecoverable error has no automatic recovery to turn off; DB::Resume refuses
    // it too, and the store says so at its next commit.
    const auto severity = bg_error.severity();
    return bg_error.IsNoSpace() && severity >= rocksdb::Status::Severity::kHardError &&
           severity < rocksdb::Status::Severity::kFatalError;
}

std::shared_ptr<rocksdb::EventListener> resume_listener(std::shared_ptr<rocksdb::Logger> info_log) {
    return std::make_shared<ResumeListener>(std::move(info_log));
}

}  // namespace barrel::store
