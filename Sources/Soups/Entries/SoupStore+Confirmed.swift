import GRDB
import JSON

/// The values the org last confirmed for each entry (by sync down, or by a sync up it accepted),
/// kept beside the entry, so `markDirty` can tell a local edit from an unchanged record.
extension SoupStore {
    /// Records `values` as what the org confirmed for entries (by `_soupEntryId`): their data
    /// fields (``JSONObject/dataFields``) — `attributes`, `_soup…` and sync fields are not kept.
    public func setConfirmed(_ values: [Int64: JSONObject], in soupName: String) async throws {
        try await pool.write { db in try Self.setConfirmed(values, in: soupName, db) }
    }

    static func setConfirmed(_ values: [Int64: JSONObject], in soupName: String, _ db: Database) throws {
        let table = try SoupTable.load(db, soupName: soupName)
        let statement = try RawStatement(db, sql: "UPDATE \(table.tableName) SET _confirmed = ? WHERE id = ?")
        var json: [UInt8] = []
        for (id, object) in values {
            json.removeAll(keepingCapacity: true)
            object.write(into: &json, including: JSONObject.isDataField)
            statement.bind(text: json, at: 1)
            statement.bind(id, at: 2)
            try statement.execute()
        }
    }

    /// The confirmed values of entries, for those that have any.
    public func confirmed(ids: [Int64], in soupName: String) async throws -> [Int64: JSONObject] {
        try await pool.read { db in
            let table = try SoupTable.load(db, soupName: soupName)
            var found: [Int64: JSONObject] = [:]
            for chunk in ids.chunked(into: 500) {
                let rows = try Row.fetchAll(
                    db, sql: "SELECT id, _confirmed FROM \(table.tableName) WHERE _confirmed IS NOT NULL AND id IN (\(chunk.map { _ in "?" }.joined(separator: ",")))",
                    arguments: StatementArguments(chunk))
                for row in rows { found[row["id"]] = try Self.decodeEntry(row["_confirmed"]) }
            }
            return found
        }
    }
}

extension JSONObject {
    /// The record's own data: every field but `attributes`, the `_soup…` fields and the `__…__`
    /// sync fields — what is compared to decide whether a record changed.
    public var dataFields: JSONObject {
        var data = JSONObject()
        for (key, value) in self where Self.isDataField(key) { data[key] = value }
        return data
    }

    /// Whether a member is record data: not `attributes`, a `_soup…` field or a `__…__` sync field.
    public static func isDataField(_ key: String) -> Bool { isDataField(utf8: key.utf8) }

    /// ``isDataField(_:)`` of a name given as its UTF-8 bytes, read in place when contiguous (called
    /// for every member of every entry a sync down or up stores).
    public static func isDataField(utf8: some BidirectionalCollection<UInt8>) -> Bool {
        utf8.withContiguousStorageIfAvailable { isDataField(name: $0) } ?? isDataField(name: Array(utf8))
    }

    private static func isDataField(name: some RandomAccessCollection<UInt8>) -> Bool {
        // A field name starts with a letter: only `attributes` and `_…` names need a look.
        guard let first = name.first else { return true }
        if first == UInt8(ascii: "a") { return !name.elementsEqual("attributes".utf8) }
        guard first == UInt8(ascii: "_") else { return true }
        if name.starts(with: "_soup".utf8) { return false }
        let underscore = UInt8(ascii: "_")
        return !(name.count >= 2 && name.dropFirst().first == underscore && name.last == underscore
                 && name.dropLast().last == underscore)
    }
}
