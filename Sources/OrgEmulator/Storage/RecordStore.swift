import Foundation
import Formats
import GRDB
import JSON

/// A record as the emulator stores it: every field that holds a value, keyed by the schema's
/// field name (an empty field is absent, and reads as `null`).
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
        var block = try reserveIds(db, prefix: prefix, count: 1)
        return block.take()!
    }

    /// `count` new ids of the objects with key prefix `prefix`, taken in one statement (a load
    /// takes a block for its rows; a row that fails leaves its id unused, as in an org).
    static func reserveIds(_ db: Database, prefix: String, count: Int) throws -> IdBlock {
        let first = try Int64.fetchOne(db.cachedStatement(sql: """
            INSERT INTO counters (prefix, next) VALUES (?1, 1 + ?2) ON CONFLICT (prefix) DO UPDATE SET next = next + ?2 RETURNING next - ?2
            """), arguments: [prefix, count]) ?? 1
        return IdBlock(prefix: prefix, counters: first..<first + Int64(count))
    }

    /// Ids taken together (``reserveIds(_:prefix:count:)``), handed out in order.
    struct IdBlock {
        let prefix: String
        var counters: Range<Int64>

        /// The next id of the block; `nil` once it is used up.
        mutating func take() -> String? {
            counters.popFirst().map { SalesforceId.make(prefix: prefix, counter: $0) }
        }
    }

    static func save(_ db: Database, _ record: StoredRecord) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO records (id, type, data, isDeleted, systemModstamp) VALUES (?, ?, ?, ?, ?)")
            .execute(arguments: [record.id, record.type, storedText(record.fields), record.isDeleted, record.systemModstamp])
    }

    /// A record's fields as stored: compact JSON without its `null` members. Every reader takes a
    /// missing field for `null` (as the API does), and most fields of most records are empty, so
    /// the text — which each index's `json_extract` parses again on every write — is about half
    /// as long.
    static func storedText(_ fields: JSONObject) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(512)
        fields.write(into: &bytes) { _, value in !value.isNull }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The record with this id; with `keeping`, only those fields of it are parsed.
    static func fetch(_ db: Database, id: String, keeping: Set<String>? = nil) throws -> StoredRecord? {
        let names = keeping.map(JSONParser.MemberNames.init)
        let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT \(columns) FROM records WHERE id = ?"), arguments: [id])
        return try rows.next().map { row in try decode(row, keeping: names) }
    }

    /// The SQL of a record's reference `field` value, as children are found by it and its index
    /// spells it.
    static func referenceExpression(_ field: String) -> String {
        "json_extract(data, '$.\(escapingQuotes(field))')"
    }

    /// A partial index per object and reference field, over the records that hold a value (led by
    /// the type and deletion columns, so SQLite prefers it to the type index however many parents
    /// are asked for): a record's children (a delete's cascade, a parent-children query's subquery) are then found
    /// by a seek, not a scan of every record of their type — which made deleting many parents,
    /// or paging through many, quadratic in the org's size.
    static func indexReferenceFields(_ db: Database, _ fields: [(type: String, field: String)]) throws {
        for (type, field) in fields {
            let name = "records_ref_\(type.count)_" + identifierCharacters("\(type)_\(field)")
            try db.execute(sql: """
                CREATE INDEX IF NOT EXISTS "\(name)" ON records (type, isDeleted, \(referenceExpression(field)))
                WHERE type = \(literal(type)) AND \(referenceExpression(field)) IS NOT NULL
                """)
        }
    }

    /// A string as an SQL literal.
    static func literal(_ text: String) -> String {
        "'" + escapingQuotes(text) + "'"
    }

    /// `text` with its single quotes doubled (most names have none: no Foundation call for them).
    static func escapingQuotes(_ text: String) -> String {
        text.utf8.contains(UInt8(ascii: "'")) ? text.replacingOccurrences(of: "'", with: "''") : text
    }

    /// `text` with every character but letters and digits made `_`, for an index's name.
    static func identifierCharacters(_ text: String) -> String {
        String(text.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) ? Character($0) : "_" })
    }

    /// The records with these ids that exist, in the order of `ids`, read 500 to a statement;
    /// with `keeping`, only those fields of each are parsed.
    static func fetch(_ db: Database, ids: [String], keeping: Set<String>? = nil) throws -> [StoredRecord] {
        var found: [String: StoredRecord] = [:]
        found.reserveCapacity(ids.count)
        let names = keeping.map(JSONParser.MemberNames.init)
        for start in stride(from: 0, to: ids.count, by: 500) {
            let chunk = Array(ids[start..<min(start + 500, ids.count)])
            let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT \(columns) FROM records WHERE id IN (\(Array(repeating: "?", count: chunk.count).joined(separator: ",")))"),
                                           arguments: StatementArguments(chunk))
            while let row = try rows.next() {
                let record = try decode(row, keeping: names)
                found[record.id] = record
            }
        }
        return ids.compactMap { found[$0] }
    }

    /// Every record of a type, in id order; deleted ones only when `includeDeleted`. With
    /// `keeping`, only those fields of each record are parsed.
    static func fetchAll(_ db: Database, type: String, includeDeleted: Bool, keeping: Set<String>? = nil) throws -> [StoredRecord] {
        let names = keeping.map(JSONParser.MemberNames.init)
        var records: [StoredRecord] = []
        let rows = try Row.fetchCursor(
            db, sql: "SELECT \(columns) FROM records WHERE type = ? \(includeDeleted ? "" : "AND isDeleted = 0") ORDER BY id",
            arguments: [type])
        while let row = try rows.next() { records.append(try decode(row, keeping: names)) }
        return records
    }

    /// Live records of `type` whose `field` equals one of `values` (reference lookups).
    static func fetchChildren(_ db: Database, type: String, field: String, parentIds: [String], keeping: Set<String>? = nil) throws -> [StoredRecord] {
        guard !parentIds.isEmpty else { return [] }
        var records: [StoredRecord] = []
        let names = keeping.map(JSONParser.MemberNames.init)
        for start in stride(from: 0, to: parentIds.count, by: 500) {
            let chunk = Array(parentIds[start..<min(start + 500, parentIds.count)])
            let rows = try Row.fetchCursor(db, sql: childrenSQL(type: type, field: field, count: chunk.count), arguments: StatementArguments(chunk))
            while let row = try rows.next() { records.append(try decode(row, keeping: names)) }
        }
        // Ordered here, not in SQL: an ORDER BY id makes SQLite walk every record of the type
        // through the type index instead of seeking the reference's.
        return records.sorted { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
    }

    /// The query ``fetchChildren(_:type:field:parentIds:keeping:)`` runs for `count` parent ids:
    /// the type and the path written out, so SQLite sees that the reference's index applies.
    static func childrenSQL(type: String, field: String, count: Int) -> String {
        let reference = referenceExpression(field)
        return """
            SELECT \(columns) FROM records WHERE type = \(literal(type)) AND isDeleted = 0
            AND \(reference) IS NOT NULL AND \(reference) IN (\(Array(repeating: "?", count: count).joined(separator: ",")))
            """
    }

    /// Counts of live records per type.
    static func counts(_ db: Database) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT type, COUNT(*) AS n FROM records WHERE isDeleted = 0 GROUP BY type") {
            counts[row["type"]] = row["n"]
        }
        return counts
    }

    /// The columns every read selects, in the order ``decode(_:keeping:)`` reads them.
    private static let columns = "id, type, data, isDeleted, systemModstamp"

    private static func decode(_ row: Row, keeping: JSONParser.MemberNames?) throws -> StoredRecord {
        // Parsed from SQLite's own bytes (rows read through a cursor): no String is made, and
        // checked, of the text first.
        let fields = try row.withUnsafeData(atIndex: 2) { data in
            let data = data ?? Data()
            return try keeping.map { try JSONParser.parseObject(data, keeping: $0) } ?? JSONParser.parse(data).value.objectValue ?? JSONObject()
        }
        return StoredRecord(id: row[0], type: row[1], fields: fields, isDeleted: row[3], systemModstamp: row[4])
    }
}
