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
            try datasetPool.write { db in try StoreSchema.migrateDatasets(db) }
            try pool.write { db in try StoreSchema.migrate(db) }
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

/// The store's own tables, created on first open.
enum StoreSchema {
    static func migrate(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS soup_attrs (
              id INTEGER PRIMARY KEY AUTOINCREMENT,
              soupName TEXT NOT NULL UNIQUE,
              indexes TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS syncs (
              id INTEGER PRIMARY KEY AUTOINCREMENT,
              name TEXT UNIQUE,
              type TEXT NOT NULL,
              soupName TEXT NOT NULL,
              target TEXT NOT NULL,
              options TEXT NOT NULL,
              status TEXT NOT NULL,
              progress INTEGER NOT NULL,
              totalSize INTEGER NOT NULL,
              maxTimeStamp INTEGER NOT NULL,
              startTime INTEGER NOT NULL,
              endTime INTEGER NOT NULL,
              error TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS runs (
              id TEXT PRIMARY KEY,
              pipeline TEXT NOT NULL,
              status TEXT NOT NULL,
              exitCode INTEGER,
              startedAt TEXT NOT NULL,
              finishedAt TEXT,
              reportDir TEXT,
              record TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS sync_journal (
              id INTEGER PRIMARY KEY AUTOINCREMENT,
              syncName TEXT NOT NULL,
              soupName TEXT NOT NULL,
              entryId INTEGER NOT NULL,
              operation TEXT NOT NULL,
              objectType TEXT NOT NULL,
              recordId TEXT,
              payload TEXT NOT NULL,
              sentAt INTEGER NOT NULL);
            CREATE INDEX IF NOT EXISTS sync_journal_sync ON sync_journal (syncName);
            """)
        // Columns added since the journal first shipped: a store made before gets them empty.
        let columns = Set(try Row.fetchAll(db, sql: "PRAGMA table_info(sync_journal)").map { $0["name"] as String })
        for (name, type) in [("serverSentAt", "INTEGER"), ("settledBy", "INTEGER"), ("linkField", "TEXT"), ("linkSoup", "TEXT"),
                             ("linkEntryId", "INTEGER"), ("bulkJobId", "TEXT")] where !columns.contains(name) {
            try db.execute(sql: "ALTER TABLE sync_journal ADD COLUMN \(name) \(type)")
        }
    }

    /// The datasets file's tables.
    static func migrateDatasets(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS datasets (
              name TEXT PRIMARY KEY,
              runId TEXT NOT NULL,
              count INTEGER NOT NULL,
              complete INTEGER NOT NULL,
              createdAt INTEGER NOT NULL);
            CREATE TABLE IF NOT EXISTS dataset_records (
              dataset TEXT NOT NULL,
              seq INTEGER NOT NULL,
              record TEXT NOT NULL,
              PRIMARY KEY (dataset, seq)) WITHOUT ROWID;
            """)
    }

    /// Stores made before datasets had their own file kept them in the main database: they move
    /// to the datasets file (a page at a time), and their tables are dropped.
    static func moveLegacyDatasets(from pool: DatabasePool, to datasets: DatabasePool) throws {
        let legacy = try pool.read { db in try db.tableExists("dataset_records") && db.tableExists("datasets") }
        guard legacy else { return }
        let infos = try pool.read { db in try Row.fetchAll(db, sql: "SELECT * FROM datasets") }
        for info in infos {
            let name: String = info["name"]
            try datasets.write { db in
                try db.execute(sql: "DELETE FROM dataset_records WHERE dataset = ?", arguments: [name])
                try db.execute(
                    sql: "INSERT OR REPLACE INTO datasets (name, runId, count, complete, createdAt) VALUES (?, ?, ?, ?, ?)",
                    arguments: [name, info["runId"], info["count"], info["complete"], info["createdAt"]])
            }
            var afterSeq: Int64 = 0
            while true {
                let page = try pool.read { db in
                    try Row.fetchAll(db, sql: "SELECT seq, record FROM dataset_records WHERE dataset = ? AND seq > ? ORDER BY seq LIMIT 5000",
                                     arguments: [name, afterSeq])
                }
                guard let last = page.last else { break }
                try datasets.write { db in
                    for row in page {
                        try db.execute(sql: "INSERT INTO dataset_records (dataset, seq, record) VALUES (?, ?, ?)",
                                       arguments: [name, row["seq"], row["record"]])
                    }
                }
                afterSeq = last["seq"]
            }
        }
        try pool.write { db in
            try db.execute(sql: "DROP TABLE dataset_records; DROP TABLE datasets")
        }
    }
}
