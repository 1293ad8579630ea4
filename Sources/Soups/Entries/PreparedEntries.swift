import GRDB
import JSON

/// Entries of one soup made ready to write: sync flags normalized, their JSON text and index
/// values computed. Preparing is CPU work that runs on any core (``SoupStore/prepare(_:for:)``),
/// so the store's single writer spends its time in SQLite only (``SoupStore/upsert(_:externalIdPath:)``).
public struct PreparedEntries: Sendable {
    /// The soup the entries were prepared for.
    public let soupName: String
    let table: SoupTable
    let entries: [PreparedEntry]

    /// The number of entries.
    public var count: Int { entries.count }
}

/// One entry made ready to write: its JSON text without the two fields the store sets
/// (`_soupEntryId`, `_soupLastModifiedDate`, appended when written), and its column values.
struct PreparedEntry: Sendable {
    /// The entry as built; `nil` for one copied from a record's bytes (``object()`` parses `json`).
    var entry: JSONObject?
    /// The entry's JSON without `_soupEntryId` and `_soupLastModifiedDate`.
    var json: [UInt8]
    /// The values of `_local`, `_syncId` and the index columns, in the order of the soup's indexes.
    var columnValues: [DatabaseValue]
    /// The same values for the entry this one replaces, as its writer last read it: the columns
    /// they hold need not be written again (see ``EntryWriter``).
    var previousColumnValues: [DatabaseValue]?
    /// The JSON of the entry's data fields, when it is to be recorded as what the org confirmed.
    var confirmed: [UInt8]?

    init(_ input: JSONObject, table: SoupTable, confirming: Bool = false, replacing previous: JSONObject? = nil) {
        var entry = input
        entry.normalizeSyncFlags()
        self.entry = entry
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        let stored: (String) -> Bool = { $0 != SyncField.soupEntryId && $0 != SyncField.soupLastModifiedDate }
        if confirming {
            // The data fields' JSON is copied from the entry's as it is written.
            var data: [UInt8] = []
            data.reserveCapacity(256)
            entry.write(into: &bytes, including: stored, alsoInto: &data, selecting: JSONObject.isDataField)
            confirmed = data
        } else {
            entry.write(into: &bytes, including: stored)
        }
        json = bytes
        columnValues = Self.columnValues(of: entry, table: table)
        previousColumnValues = previous.map { Self.columnValues(of: $0, table: table) }
    }

    /// The values of `_local`, `_syncId` and the index columns for `entry`.
    static func columnValues(of entry: JSONObject, table: SoupTable) -> [DatabaseValue] {
        var values: [DatabaseValue] = [(entry.isDirty ? 1 : 0 as Int64).databaseValue, entry[SyncField.syncId]?.integerValue?.databaseValue ?? .null]
        values.reserveCapacity(2 + table.columns.count)
        let wrapped = JSONValue.object(entry)
        for (index, column) in zip(table.spec.indexes, table.columns) where column != nil {
            let value = index.path.utf8.contains(UInt8(ascii: ".")) ? wrapped.value(atPath: index.path) : entry[index.path]
            values.append(SoupTable.columnValue(value, type: index.type))
        }
        return values
    }

    /// The entry as an object: as built, else parsed from its JSON.
    func object() throws -> JSONObject {
        if let entry { return entry }
        return try SoupStore.decodeEntry(json)
    }

    /// The entry as stored: with its `_soupEntryId` and `_soupLastModifiedDate`. Entries copied
    /// from records are only ever merged, never returned as stored: theirs is parsed.
    func stored(id: Int64, modified: Int64) -> JSONObject {
        var stored = entry ?? (try? object()) ?? JSONObject()
        stored.reserveCapacity(stored.count + 2)
        stored[SyncField.soupEntryId] = .integer(id)
        stored[SyncField.soupLastModifiedDate] = .integer(modified)
        return stored
    }

    /// `"_soupEntryId":` and `,"_soupLastModifiedDate":` as bytes.
    private static let entryIdName = Array("\"\(SyncField.soupEntryId)\":".utf8)
    private static let lastModifiedName = Array(",\"\(SyncField.soupLastModifiedDate)\":".utf8)

    /// Writes the stored JSON into `buffer` (replacing its contents): the body with
    /// `_soupEntryId` and `_soupLastModifiedDate` appended.
    func writeStoredJSON(id: Int64, modified: Int64, into buffer: inout [UInt8]) {
        buffer.removeAll(keepingCapacity: true)
        buffer.append(contentsOf: json[..<(json.count - 1)])
        if json.count > 2 { buffer.append(UInt8(ascii: ",")) }
        buffer.append(contentsOf: Self.entryIdName)
        JSONValue.writeInteger(id, into: &buffer)
        buffer.append(contentsOf: Self.lastModifiedName)
        JSONValue.writeInteger(modified, into: &buffer)
        buffer.append(UInt8(ascii: "}"))
    }

    /// `,"_soupEntryId":<integer>,"_soupLastModifiedDate":<integer>}` (without its comma after an
    /// empty body), as ``writeStoredJSON(id:modified:into:)`` appends them.
    static func isStoreFieldsTail(_ tail: Slice<UnsafeBufferPointer<UInt8>>, after members: Bool) -> Bool {
        var rest = tail[...]
        if members {
            guard rest.first == UInt8(ascii: ",") else { return false }
            rest = rest.dropFirst()
        }
        for name in [entryIdName, lastModifiedName] {
            guard rest.starts(with: name) else { return false }
            rest = rest.dropFirst(name.count)
            if rest.first == UInt8(ascii: "-") { rest = rest.dropFirst() }
            let digits = rest.prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
            guard !digits.isEmpty else { return false }
            rest = rest.dropFirst(digits.count)
        }
        return rest.elementsEqual([UInt8(ascii: "}")])
    }
}

/// Entries as a write stored them: each prepared entry with its `_soupEntryId` and
/// `_soupLastModifiedDate`, assembled only when read.
public struct StoredEntries: RandomAccessCollection, Sendable {
    let prepared: [PreparedEntry]
    /// The `_soupEntryId` of each entry, in order.
    public let ids: [Int64]
    /// The `_soupLastModifiedDate` the write gave every entry.
    public let lastModified: Int64

    public var startIndex: Int { 0 }
    public var endIndex: Int { ids.count }

    public subscript(position: Int) -> JSONObject {
        prepared[position].stored(id: ids[position], modified: lastModified)
    }
}
