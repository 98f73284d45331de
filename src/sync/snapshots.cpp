// A datadir's `snapshots/` folder: each snapshot a folder `<height>/` of files `metadata`, `0`
// (the index), `1` .. `n` (the data chunks), built under a hidden name and renamed into place
// whole; and the thread that takes them behind the commits.

#include <barrel/core/keccak.hpp>
#include <barrel/io/files.hpp>
#include <barrel/sync/snapshot.hpp>

#include <algorithm>
#include <charconv>

namespace barrel::sync {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kMetadataFile = "metadata";
constexpr std::string_view kBuildingPrefix = ".building-";

Unexpected<SnapshotError> io_error(std::string message) {
    return unexpected(SnapshotError{SnapshotErrorCode::io, std::move(message)});
}

/// The height a folder's name is (decimal digits only), or nullopt.
std::optional<uint64_t> height_of(const std::string& name) {
    uint64_t height = 0;
    const auto [end, err] = std::from_chars(name.data(), name.data() + name.size(), height);
    if (err != std::errc{} || end != name.data() + name.size() || name.empty()) return {};
    return height;
}

Expected<Bytes, SnapshotError> read_bounded(const fs::path& path) {
    auto bytes = io::read_file(path.string(), kMaxChunkBytes);
    if (!bytes) return io_error("cannot read " + path.string() + ": " + bytes.error().reason);
    return std::move(bytes).value();
}

/// The descriptor of the complete snapshot in `folder` (its metadata and index read back).
Expected<Descriptor, SnapshotError> describe(const fs::path& folder, uint64_t height) {
    auto metadata = read_bounded(folder / kMetadataFile);
    if (!metadata) return unexpected(metadata.error());
    auto index_bytes = read_bounded(folder / "0");
    if (!index_bytes) return unexpected(index_bytes.error());
    auto index = decode_index(*index_bytes);
    if (!index) return unexpected(index.error());
    if (auto decoded = decode_metadata(*metadata); !decoded) return unexpected(decoded.error());
    return Descriptor{height, kFormat, static_cast<uint32_t>(index->chunks.size() + 1),
                      keccak256(*index_bytes), std::move(metadata).value()};
}

Expected<void, SnapshotError> write_file(const fs::path& path, BytesView bytes) {
    if (auto w = io::replace_file(path.string(), bytes, true); !w)
        return io_error(w.error().message);
    return {};
}

}  // namespace

Expected<std::unique_ptr<Snapshots>, SnapshotError> Snapshots::open(fs::path dir, size_t keep) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return io_error("cannot create " + dir.string() + ": " + ec.message());
    std::unique_ptr<Snapshots> snapshots{new Snapshots{dir, std::max<size_t>(keep, 1)}};
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.starts_with(kBuildingPrefix)) {  // a write a crash interrupted
            fs::remove_all(entry.path(), ec);
            continue;
        }
        const auto height = height_of(name);
        if (!height || !entry.is_directory()) continue;
        auto described = describe(entry.path(), *height);
        if (!described) return unexpected(described.error());
        snapshots->m_listed.push_back(std::move(described).value());
    }
    if (ec) return io_error("cannot list " + dir.string() + ": " + ec.message());
    std::sort(snapshots->m_listed.begin(), snapshots->m_listed.end(),
              [](const Descriptor& a, const Descriptor& b) { return a.height < b.height; });
    return snapshots;
}

Expected<Descriptor, SnapshotError> Snapshots::take(const store::Snapshot& at,
                                                    const std::atomic<bool>* stop) {
    const uint64_t height = at.head().number;
    {
        const std::lock_guard lock{m_mutex};
        for (const Descriptor& d : m_listed)
            if (d.height == height) return d;
    }
    const fs::path building = m_dir / (std::string{kBuildingPrefix} + std::to_string(height));
    const fs::path target = m_dir / std::to_string(height);
    std::error_code ec;
    fs::remove_all(building, ec);
    if (!fs::create_directories(building, ec) || ec)
        return io_error("cannot create " + building.string() + ": " + ec.message());
    // Each data chunk to its file as it is cut; the index (chunk 0) and the metadata last.
    auto built = build_snapshot(at, [&](uint32_t index, BytesView chunk) {
        if (stop && stop->load(std::memory_order_relaxed))
            return Expected<void, SnapshotError>{io_error("stopped")};
        return write_file(building / std::to_string(index), chunk);
    });
    if (!built) {
        fs::remove_all(building, ec);  // what is left is removed at the next open too
        return unexpected(built.error());
    }
    const auto& [descriptor, index] = *built;
    BARREL_TRY(write_file(building / "0", index));
    BARREL_TRY(write_file(building / kMetadataFile, descriptor.metadata));
    if (auto synced = io::sync_directory(building.string()); !synced)
        return io_error(synced.error().message);
    if (auto moved = io::rename_durably(building.string(), target.string());
        !moved && !moved.error().renamed)
        return io_error(moved.error().message);
    std::vector<Descriptor> dropped;
    {
        const std::lock_guard lock{m_mutex};
        m_listed.push_back(descriptor);
        std::sort(m_listed.begin(), m_listed.end(),
                  [](const Descriptor& a, const Descriptor& b) { return a.height < b.height; });
        while (m_listed.size() > m_keep) {
            dropped.push_back(m_listed.front());
            m_listed.erase(m_listed.begin());
        }
    }
    // Unlisted first, then removed: a chunk being served meanwhile fails as not found.
    for (const Descriptor& d : dropped) fs::remove_all(m_dir / std::to_string(d.height), ec);
    return descriptor;
}

std::vector<Descriptor> Snapshots::list() const {
    const std::lock_guard lock{m_mutex};
    return m_listed;
}

Expected<Bytes, SnapshotError> Snapshots::chunk(uint64_t height, uint32_t format,
                                                uint32_t index) const {
    {
        const std::lock_guard lock{m_mutex};
        const auto listed = std::find_if(m_listed.begin(), m_listed.end(),
                                         [&](const Descriptor& d) { return d.height == height; });
        if (format != kFormat || listed == m_listed.end() || index >= listed->chunks)
            return unexpected(
                SnapshotError{SnapshotErrorCode::not_found,
                              "no chunk " + std::to_string(index) + " of a snapshot of block " +
                                  std::to_string(height) + " in format " + std::to_string(format)});
    }
    return read_bounded(m_dir / std::to_string(height) / std::to_string(index));
}

std::optional<uint64_t> Snapshots::oldest() const {
    const std::lock_guard lock{m_mutex};
    if (m_listed.empty()) return std::nullopt;
    return m_listed.front().height;
}

// ---- BackgroundWriter --------------------------------------------------------------------------

BackgroundWriter::BackgroundWriter(Snapshots& snapshots, WriterHooks hooks)
    : m_snapshots{snapshots}, m_hooks{std::move(hooks)}, m_thread{[this] { run(); }} {}

BackgroundWriter::~BackgroundWriter() {
    m_abandon.store(true, std::memory_order_relaxed);  // a snapshot being written stops
    {
        const std::lock_guard lock{m_mutex};
        m_stop = true;
    }
    m_wake.notify_all();
    m_thread.join();
}

bool BackgroundWriter::request(std::unique_ptr<store::Snapshot> at) {
    {
        const std::lock_guard lock{m_mutex};
        if (m_busy || m_pending) return false;
        m_pending = std::move(at);
    }
    m_wake.notify_one();
    return true;
}

void BackgroundWriter::wait_idle() {
    std::unique_lock lock{m_mutex};
    m_idle.wait(lock, [this] { return (!m_busy && !m_pending) || m_stop; });
}

void BackgroundWriter::run() {
    std::unique_lock lock{m_mutex};
    for (;;) {
        m_wake.wait(lock, [this] { return m_stop || m_pending; });
        if (m_stop) break;
        std::unique_ptr<store::Snapshot> at = std::move(m_pending);
        m_busy = true;
        lock.unlock();
        if (m_hooks.before_write) m_hooks.before_write(at->head().number);
        auto taken = m_snapshots.take(*at, &m_abandon);
        at.reset();  // the RocksDB snapshot released before the next is asked for
        if (m_hooks.written) m_hooks.written(taken);
        lock.lock();
        m_busy = false;
        m_idle.notify_all();
    }
    m_pending.reset();
    m_busy = false;
    m_idle.notify_all();
}

}  // namespace barrel::sync
