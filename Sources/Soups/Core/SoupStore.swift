import Foundation
import GRDB
import JSON
import Synchronization

/// A SmartStore-style store: soups of JSON entries in one SQLite file, plus the tables a pipeline
/// needs between stages (named syncs, run records, the sync journal). Datasets — stages' output
/// records — live in a sibling file, `<store>-datasets`, with a writer of their own, so a stage
/// appending its output never waits for another stage writing a soup.
///
/// Both files use WAL so readers (`pipeline soups`) never block a run; every write method runs in
/// one transaction. Concurrent runs on one store are prevented by ``StoreLock``, not here.
public final class SoupStore: Sendable {
    /// The database file.
    public let path: String
    let pool: DatabasePool
    /// The datasets file; `nil` for a store opened for reading that has none yet.
    let datasetPool: DatabasePool?
    /// Filters of the values soups hold at tracked paths, by soup and path (`trackValues(in:path:)`).
    let valueFilters = Mutex<[String: [String: SoupValueFilter]]>([:])

    /// The datasets file of the store at `path`.
    public static func datasetsPath(of path: String) -> String { path + "-datasets" }

    /// Every file of the store at `path`: the database, its datasets and their WAL companions.
    public static func files(of path: String) -> [String] {
        [path, datasetsPath(of: path)].flatMap { [$0, $0 + "-wal", $0 + "-shm"] }
    }

    /// Opens (creating if needed) the store at `path` for reading and writing.
    public convenience init(path: String) throws {
        try self.init(path: path, readOnly: false)
    }

    /// Opens an existing store for reading only; fails with ``SoupStoreError/storeMissing(_:)`` when
    /// there is no store at `path`. Reading takes no lock and never blocks a running pipeline.
    public static func openForReading(path: String) throws -> SoupStore {
        guard FileManager.default.fileExists(atPath: path) else { throw SoupStoreError.storeMissing(path) }
        return try SoupStore(path: path, readOnly: true)
    }

    private init(path: String, readOnly: Bool) throws {
        self.path = path
        /// The soups' writer gets 32 MB of page cache (SQLite's default is 2 MB), so a soup's index
        /// B-trees stay in memory while a million entries go in; readers, whose cache SQLite drops
        /// whenever another connection writes, and datasets, written and read in order, need little.
        func configuration(cacheMegabytes: Int) -> Configuration {
            var configuration = Configuration()
            configuration.busyMode = .timeout(10)
            configuration.readonly = readOnly
            if !readOnly {
                configuration.prepareDatabase { db in
                    // 16 KB pages for new files (SQLite's default is 4 KB): a bulk load commits a
                    // quarter as many WAL frames. Existing files keep their page size.
                    try db.execute(sql: "PRAGMA page_size = 16384")
                    try db.execute(sql: "PRAGMA synchronous = NORMAL")
                    let megabytes = db.configuration.readonly ? min(cacheMegabytes, 8) : cacheMegabytes
                    try db.execute(sql: "PRAGMA cache_size = -\(megabytes * 1024)")
                    // Checkpoint the WAL every 32 MB rather than every 4 MB: fewer syncs during bulk loads.
                    let pageSize = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
                    try db.execute(sql: "PRAGMA wal_autocheckpoint = \((32 << 20) / pageSize)")
                }
            }
            return configuration
        }
        if !readOnly {
            // Customer data: the folder and the database files are the owner's only, whatever the
            // umask (SQLite gives its WAL and shared-memory files the database file's mode).
            try FileManager.default.createDirectory(
                at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
            Self.createPrivateFiles([path, Self.datasetsPath(of: path)])
        }
        let soupConfiguration = configuration(cacheMegabytes: 32), datasetConfiguration = configuration(cacheMegabytes: 4)
        pool = try DatabasePool(path: path, configuration: soupConfiguration)
        let datasetsPath = Self.datasetsPath(of: path)
        if readOnly {
            datasetPool = FileManager.default.fileExists(atPath: datasetsPath)
                ? try DatabasePool(path: datasetsPath, configuration: datasetConfiguration) : nil
        } else {
            let datasetPool = try DatabasePool(path: datasetsPath, configuration: datasetConfiguration)
            self.datasetPool = datasetPool
            try StoreSchema.migrate(datasetPool, with: StoreSchema.datasetsMigrator, file: datasetsPath)
            try StoreSchema.migrate(pool, with: StoreSchema.storeMigrator, file: path)
            try StoreSchema.moveLegacyDatasets(from: pool, to: datasetPool)
        }
    }

    /// Creates the files that do not exist yet, empty and owner-only (SQLite takes an empty file
    /// for a new database).
    static func createPrivateFiles(_ paths: [String]) {
        for path in paths where !FileManager.default.fileExists(atPath: path) {
            _ = FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
        }
    }

    /// Copies the whole store, datasets included, consistently, to `destination` (used by dry runs).
    public func copy(to destination: String) throws {
        for file in Self.files(of: destination) { try? FileManager.default.removeItem(atPath: file) }
        Self.createPrivateFiles([destination, Self.datasetsPath(of: destination)])
        for (source, target) in [(pool, destination), (datasetPool, Self.datasetsPath(of: destination))] {
            guard let source else { continue }
            let copy = try DatabaseQueue(path: target)
            try source.backup(to: copy)
            try copy.close()
        }
    }

    /// Closes the database connections. Further use of the store fails.
    public func close() throws {
        try pool.close()
        try datasetPool?.close()
    }
}
