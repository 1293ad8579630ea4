import GRDB
import JSON

/// The members of an entry ``SoupStore/saveCreated(_:in:idField:reading:settling:check:)`` decodes
/// for its check: those named, and optionally every data field (``JSONObject/isDataField(_:)``).
public struct EntryMemberSelection: Sendable {
    let names: [[UInt8]]
    let dataFields: Bool

    public init(_ names: some Sequence<String>, dataFields: Bool = false) {
        self.names = names.map { Array($0.utf8) }
        self.dataFields = dataFields
    }

    func contains(_ name: ArraySlice<UInt8>) -> Bool {
        (dataFields && JSONObject.isDataField(utf8: name)) || names.contains { $0.count == name.count && $0.elementsEqual(name) }
    }
}

extension SoupStore {
    /// Saves creates the org made for stored entries, as a sync up saves a confirmed create, but
    /// editing each entry's stored JSON as text instead of parsing and writing it whole: its
    /// `idField` takes the new id, its four sync flags become `false` and `__last_error__` `null`
    /// (members it lacks are added, in that order), its data fields are recorded as confirmed and
    /// its index columns follow; the journal entries `settling` names are removed; all in one
    /// transaction.
    ///
    /// `check` sees each entry's members that `reading` selects, and its `_soupEntryId`, and
    /// returns the entry's new id with what to return for it — or `nil` when the entry is not such
    /// a create. Returns `nil`, having written nothing, when `check` refuses an entry, an entry is
    /// missing, or the save needs the general path: a soup with full-text indexes or a nested index
    /// under a member the save changes, a member name written with escapes or repeated.
    public func saveCreated<Saved: Sendable>(
        _ entryIds: [Int64], in soupName: String, idField: String, reading: EntryMemberSelection, settling journalIds: [Int64],
        check: @escaping @Sendable (JSONObject) -> (id: String, saved: Saved)?
    ) async throws -> [Saved]? {
        do {
            return try await pool.write { db in
                let table = try SoupTable.load(db, soupName: soupName)
                guard !table.hasFullText, let patch = CreatePatch(table: table, idField: idField) else { throw NotPatchable() }
                let columns = ["_local", "_syncId"] + table.columns.compactMap { $0 }
                let read = try RawStatement(db, sql: "SELECT soup, \(columns.joined(separator: ", ")) FROM \(table.tableName) WHERE id = ?")
                let writer = try EntryWriter(table: table, filters: self.valueFilters(for: table), db: db)
                var saved: [Saved] = []
                saved.reserveCapacity(entryIds.count)
                for entryId in entryIds {
                    var stored: (text: [UInt8], columns: [DatabaseValue])?
                    read.bind(entryId, at: 1)
                    try read.forEachRow { row in stored = (row.bytes(0), columns.indices.map { row.value(Int32($0 + 1)) }) }
                    guard let stored, let members = try? JSONParser.memberLocations(stored.text) else { throw NotPatchable() }
                    var entry = JSONObject()
                    entry[SyncField.soupEntryId] = .integer(entryId)
                    for member in members where reading.contains(stored.text[member.name]) {
                        guard let value = try? JSONParser.parse(stored.text[member.value]).value else { throw NotPatchable() }
                        entry[String(decoding: stored.text[member.name], as: UTF8.self)] = value
                    }
                    guard let (id, value) = check(entry),
                          let prepared = patch.apply(to: stored.text, members: members, id: id, entryId: entryId, columns: stored.columns)
                    else { throw NotPatchable() }
                    _ = try writer.write(prepared, externalIdPath: SyncField.soupEntryId)
                    saved.append(value)
                }
                try writer.finish()
                try Self.removeFromJournal(ids: journalIds, db)
                return saved
            }
        } catch is NotPatchable {
            return nil
        }
    }

    private struct NotPatchable: Error {}
}

/// What ``SoupStore/saveCreated(_:in:idField:reading:settling:check:)`` changes in one soup's
/// entries: the members it sets and the columns that follow them.
private struct CreatePatch {
    /// The id field, the four sync flags and `__last_error__`, in the order members are added.
    let names: [[UInt8]]
    /// Positions, among `_local`, `_syncId` and the index columns, of columns over the id field.
    let idColumns: [Int]
    /// The same for columns over the other members set, with the values they take.
    let fixedColumns: [(offset: Int, value: DatabaseValue)]
    let idIndexTypes: [IndexType]
    private static let soupFields: [[UInt8]] = [Array(SyncField.soupEntryId.utf8), Array(SyncField.soupLastModifiedDate.utf8)]

    /// `nil` when an index reaches inside a member the save sets (its value is not known as text).
    init?(table: SoupTable, idField: String) {
        let members = [idField] + SyncField.flags + [SyncField.lastError]
        names = members.map { Array($0.utf8) }
        var idColumns: [Int] = []
        var idIndexTypes: [IndexType] = []
        var fixed: [(Int, DatabaseValue)] = [(0, (0 as Int64).databaseValue)]
        var offset = 2
        for (index, column) in zip(table.spec.indexes, table.columns) where column != nil {
            defer { offset += 1 }
            guard let member = members.first(where: { index.path == $0 || index.path.hasPrefix($0 + ".") }) else { continue }
            guard index.path == member else { return nil }
            if member == idField {
                idColumns.append(offset)
                idIndexTypes.append(index.type)
            } else {
                fixed.append((offset, SoupTable.columnValue(member == SyncField.lastError ? .null : .bool(false), type: index.type)))
            }
        }
        self.idColumns = idColumns
        self.idIndexTypes = idIndexTypes
        fixedColumns = fixed
    }

    /// The entry `text` as the save leaves it, ready to write; `nil` when a member name is
    /// written with escapes or one the save sets is repeated.
    func apply(to text: [UInt8], members: [JSONParser.MemberLocation], id: String, entryId: Int64,
               columns: [DatabaseValue]) -> PreparedEntry? {
        var idValue: [UInt8] = []
        JSONValue.writeString(id, into: &idValue)
        let values: [ArraySlice<UInt8>] = [idValue[...]] + Array(repeating: Array("false".utf8)[...], count: 4) + [Array("null".utf8)[...]]
        var present = Array(repeating: false, count: names.count)
        var json: [UInt8] = [UInt8(ascii: "{")]
        var data: [UInt8] = [UInt8(ascii: "{")]
        json.reserveCapacity(text.count + 64)
        data.reserveCapacity(text.count)
        for member in members {
            let name = text[member.name]
            if name.contains(UInt8(ascii: "\\")) { return nil }
            if Self.soupFields.contains(where: { $0.elementsEqual(name) }) { continue }
            if let position = names.firstIndex(where: { $0.elementsEqual(name) }) {
                if present[position] { return nil }
                present[position] = true
                Self.append(name, values[position], to: &json, data: &data)
            } else {
                Self.append(name, text[member.value], to: &json, data: &data)
            }
        }
        for position in names.indices where !present[position] { Self.append(names[position][...], values[position], to: &json, data: &data) }
        json.append(UInt8(ascii: "}"))
        data.append(UInt8(ascii: "}"))
        var changed = columns
        for (offset, value) in fixedColumns { changed[offset] = value }
        for (offset, type) in zip(idColumns, idIndexTypes) { changed[offset] = SoupTable.columnValue(.string(id), type: type) }
        return PreparedEntry(patchedJSON: json, entryId: entryId, columnValues: changed, previousColumnValues: columns, confirmed: data)
    }

    /// Appends a member to the entry's JSON and, when it is a data field, to its data's.
    private static func append(_ name: ArraySlice<UInt8>, _ value: ArraySlice<UInt8>, to json: inout [UInt8], data: inout [UInt8]) {
        func member(into buffer: inout [UInt8]) {
            if buffer.count > 1 { buffer.append(UInt8(ascii: ",")) }
            buffer.append(UInt8(ascii: "\""))
            buffer.append(contentsOf: name)
            buffer.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
            buffer.append(contentsOf: value)
        }
        member(into: &json)
        if JSONObject.isDataField(utf8: name) { member(into: &data) }
    }
}
