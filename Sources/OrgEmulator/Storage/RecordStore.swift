import Foundation
import Formats
import GRDB
import JSON

/// A record as the emulator stores it: every field value keyed by the schema's field name.
struct StoredRecord: Sendable {
    var id: String
    var type: String
    var fields: JSONObject
    var isDeleted: Bool
    /// Epoch milliseconds of the last change (the sync watermark).
    var systemModstamp: Int64
}

/// The emulator's SQLite database: records (live and in the recycle bin), id counters and the
/// digest of the seed it was filled from.
final class RecordStore: Sendable {
    let queue: DatabaseQueue

    /// Opens the database at `path`, or an in-memory one when `path` is `nil`.
    init(path: String?) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        if let path {
            try FileManager.default.createDirectory(
                at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
            queue = try DatabaseQueue(path: path, configuration: configuration)
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA journal_mode = WAL")
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
            }
        } else {
            queue = try DatabaseQueue(configuration: configuration)
        }
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS counters (prefix TEXT PRIMARY KEY, next INTEGER NOT NULL);
                CREATE TABLE IF NOT EXISTS records (
                  id TEXT PRIMARY KEY, type TEXT NOT NULL, data TEXT NOT NULL,
                  isDeleted INTEGER NOT NULL DEFAULT 0, systemModstamp INTEGER NOT NULL);
                CREATE INDEX IF NOT EXISTS records_type ON records (type, isDeleted, id);
                CREATE INDEX IF NOT EXISTS records_modstamp ON records (type, systemModstamp);
                """)
        }
    }

    static func meta(_ db: Database, _ key: String) throws -> String? {
        try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = ?", arguments: [key])
    }

    static func setMeta(_ db: Database, _ key: String, _ value: String) throws {
        try db.execute(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", arguments: [key, value])
    }

    /// Removes every record and counter.
    static func wipe(_ db: Database) throws {
        try db.execute(sql: "DELETE FROM records; DELETE FROM counters;")
    }

    /// A new id for an object with key prefix `prefix`.
    static func nextId(_ db: Database, prefix: String) throws -> String {
        let next = try Int64.fetchOne(db, sql: "SELECT next FROM counters WHERE prefix = ?", arguments: [prefix]) ?? 1
        try db.execute(sql: "INSERT OR REPLACE INTO counters (prefix, next) VALUES (?, ?)", arguments: [prefix, next + 1])
        return SalesforceId.make(prefix: prefix, counter: next)
    }

    static func save(_ db: Database, _ record: StoredRecord) throws {
        try db.execute(
            sql: "INSERT OR REPLACE INTO records (id, type, data, isDeleted, systemModstamp) VALUES (?, ?, ?, ?, ?)",
            arguments: [record.id, record.type, JSONValue.object(record.fields).jsonString, record.isDeleted, record.systemModstamp])
    }

    static func fetch(_ db: Database, id: String) throws -> StoredRecord? {
        try Row.fetchOne(db, sql: "SELECT * FROM records WHERE id = ?", arguments: [id]).map(decode)
    }

    /// Every record of a type, in id order; deleted ones only when `includeDeleted`.
    static func fetchAll(_ db: Database, type: String, includeDeleted: Bool) throws -> [StoredRecord] {
        try Row.fetchAll(
            db, sql: "SELECT * FROM records WHERE type = ? \(includeDeleted ? "" : "AND isDeleted = 0") ORDER BY id",
            arguments: [type]
        ).map(decode)
    }

    /// Live records of `type` whose `field` equals one of `values` (reference lookups).
    static func fetchChildren(_ db: Database, type: String, field: String, parentIds: [String]) throws -> [StoredRecord] {
        guard !parentIds.isEmpty else { return [] }
        var records: [StoredRecord] = []
        for start in stride(from: 0, to: parentIds.count, by: 500) {
            let chunk = Array(parentIds[start..<min(start + 500, parentIds.count)])
            records += try Row.fetchAll(
                db, sql: """
                    SELECT * FROM records WHERE type = ? AND isDeleted = 0
                    AND json_extract(data, ?) IN (\(chunk.map { _ in "?" }.joined(separator: ",")))
                    ORDER BY id
                    """, arguments: StatementArguments([type, "$.\(field)"] + chunk)
            ).map(decode)
        }
        return records
    }

    /// Counts of live records per type.
    static func counts(_ db: Database) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT type, COUNT(*) AS n FROM records WHERE isDeleted = 0 GROUP BY type") {
            counts[row["type"]] = row["n"]
        }
        return counts
    }

    private static func decode(_ row: Row) throws -> StoredRecord {
        StoredRecord(
            id: row["id"], type: row["type"], fields: try JSONParser.parse(row["data"] as String).objectValue ?? JSONObject(),
            isDeleted: row["isDeleted"], systemModstamp: row["systemModstamp"])
    }
}
