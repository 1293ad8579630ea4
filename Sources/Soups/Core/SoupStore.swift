import Foundation
import GRDB
import JSON

/// A SmartStore-style store: soups of JSON entries in one SQLite file, plus the tables a pipeline
/// needs between stages (named syncs, datasets, run records).
///
/// The store uses WAL so readers (`pipeline soups`) never block a run; every write method runs in
/// one transaction. Concurrent runs on one store are prevented by ``StoreLock``, not here.
public final class SoupStore: Sendable {
    /// The database file.
    public let path: String
    let pool: DatabasePool

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
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.readonly = readOnly
        if !readOnly {
            configuration.prepareDatabase { db in
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
                // 32 MB of page cache per connection (SQLite's default is 2 MB): a soup's index
                // B-trees stay in memory while a million entries go in.
                try db.execute(sql: "PRAGMA cache_size = -32768")
                // Checkpoint the WAL every 32 MB rather than every 4 MB: fewer syncs during bulk loads.
                try db.execute(sql: "PRAGMA wal_autocheckpoint = 8192")
            }
            try FileManager.default.createDirectory(
                at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
        }
        pool = try DatabasePool(path: path, configuration: configuration)
        if !readOnly {
            try pool.write { db in try StoreSchema.migrate(db) }
        }
    }

    /// Copies the whole store, consistently, into a new file at `destination` (used by dry runs).
    public func copy(to destination: String) throws {
        try? FileManager.default.removeItem(atPath: destination)
        let target = try DatabaseQueue(path: destination)
        try pool.backup(to: target)
        try target.close()
    }

    /// Closes the database connections. Further use of the store fails.
    public func close() throws {
        try pool.close()
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
    }
}
