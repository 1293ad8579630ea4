import Foundation
import GRDB
import JSON

extension SoupStore {
    /// Writes a patch's fields into its entries, in one transaction with its journal entries'
    /// settling, and returns the values of the fields it reads, entry by entry (`nil`: absent).
    ///
    /// Returns `nil`, with nothing written, when the patch cannot be applied as it stands: an
    /// entry is gone or changed since its caller read it; the soup indexes a path below a patched
    /// field, a patched field in full text, or `_soupLastModifiedDate`; a patched name is written
    /// twice in an entry, or any name with escapes (text the store did not write); or the patch
    /// sets `__sync_id__`, or an operation flag without `__local__` to match (the columns the store
    /// derives from them would not follow). The caller then writes the entries the usual way.
    public func patch(_ patch: SoupPatch) async throws -> [[JSONValue?]]? {
        do {
            return try await pool.write { db in try self.patch(patch, db) }
        } catch is PatchRefused {
            return nil
        }
    }

    /// Thrown inside the transaction to roll it back when the patch cannot be applied.
    private struct PatchRefused: Error {}

    private func patch(_ patch: SoupPatch, _ db: Database) throws -> [[JSONValue?]] {
        let table = try SoupTable.load(db, soupName: patch.soup)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        // The members written, by name: the entry's own first (as a caller sets an id before
        // clearing flags), the common fields, then the date the store keeps.
        let ownValue = 0
        let names = [patch.valueField] + patch.fields.map(\.name) + [SyncField.soupLastModifiedDate]
        let fieldValues: [JSONValue?] = [nil] + patch.fields.map(\.value) + [.integer(now)]
        var values: [[UInt8]?] = fieldValues.map { value in value.map { Array($0.jsonString.utf8) } }
        values[ownValue] = []
        let local = try Self.checkNames(names, values: fieldValues, ownValue: ownValue)
        let (columns, filters) = try changedColumns(table, names: names, local: local)
        let select = try RawStatement(db, sql: "SELECT soup FROM \(table.tableName) WHERE id = ? AND lastModified = ?")
        let set = ["soup", "lastModified"] + columns.map(\.name) + (patch.confirming ? ["_confirmed"] : [])
        let update = try RawStatement(db, sql: "UPDATE \(table.tableName) SET \(set.map { "\($0) = ?" }.joined(separator: ", ")) WHERE id = ?")
        let nameBytes = names.map { Array($0.utf8) }
        let readBytes = patch.reading.map { Array($0.utf8) }
        var text: [UInt8] = []
        var patched: [UInt8] = []
        var confirmed: [UInt8] = []
        var scratch = RewriteScratch()
        var read: [[JSONValue?]] = []
        read.reserveCapacity(patch.entries.count)
        var full: [SoupValueFilter] = []
        for entry in patch.entries {
            select.bind(entry.id, at: 1)
            select.bind(entry.lastModified, at: 2)
            var found = false
            try select.forEachRow { row in
                text.removeAll(keepingCapacity: true)
                text.append(contentsOf: row.text(0))
                found = true
            }
            guard found else { throw PatchRefused() }
            values[ownValue]!.removeAll(keepingCapacity: true)
            entry.value.write(into: &values[ownValue]!)
            read.append(try Self.rewrite(text, names: nameBytes, values: values, reading: readBytes, into: &patched,
                                         confirming: patch.confirming, confirmed: &confirmed, scratch: &scratch))
            update.bind(now, at: 2)
            var parameter: Int32 = 2
            for column in columns {
                parameter += 1
                let value = column.field == ownValue ? entry.value : fieldValues[column.field]
                if let type = column.type {
                    update.bind(SoupTable.columnValue(value, type: type), at: parameter)
                } else {
                    update.bind((value?.isTruthy ?? false) ? 1 : 0, at: parameter)
                }
            }
            var confirmedText: (text: [UInt8], index: Int32)?
            if patch.confirming {
                parameter += 1
                confirmedText = (confirmed, parameter)
            }
            update.bind(entry.id, at: parameter + 1)
            try update.execute(bindingText: patched, at: 1, and: confirmedText)
            for (filter, field, type) in filters {
                let value = field == ownValue ? entry.value : fieldValues[field]
                if filter.insert(SoupTable.columnValue(value, type: type)), !full.contains(where: { $0 === filter }) { full.append(filter) }
            }
        }
        for filter in full { try filter.rebuild(db) }
        try SyncJournal.remove(ids: patch.settledJournalIds, db)
        return read
    }

    /// Refuses a patch that names a member twice, a reserved or dotted member, or a sync flag
    /// without `__local__` beside it (`_local` is `__local__`'s: an operation flag set true needs
    /// it set true too, as `normalizeSyncFlags` would). Returns where `__local__` is, if named.
    private static func checkNames(_ names: [String], values: [JSONValue?], ownValue: Int) throws -> Int? {
        let reserved: Set<String> = [SyncField.soupEntryId, SyncField.soupLastModifiedDate, SyncField.soupCreatedDate, SyncField.syncId]
        guard Set(names).count == names.count, names.dropLast().allSatisfy({ !reserved.contains($0) && isPlainName($0) }) else {
            throw PatchRefused()
        }
        let local = names.firstIndex(of: SyncField.local)
        for (position, name) in names.enumerated() where SyncField.flags.contains(name) && name != SyncField.local {
            guard let local, position != ownValue, local != ownValue else { throw PatchRefused() }
            if values[position]?.isTruthy == true && values[local]?.isTruthy != true { throw PatchRefused() }
        }
        return local
    }

    /// The columns a patch of `names` changes — `_local` with `__local__`, and the index column of
    /// each patched field — and the value filters those columns feed. A patched field under a
    /// nested or full-text index, or the store's own date, is refused.
    private func changedColumns(_ table: SoupTable, names: [String], local: Int?) throws
        -> (columns: [(name: String, field: Int, type: IndexType?)], filters: [(filter: SoupValueFilter, field: Int, type: IndexType)]) {
        var columns: [(name: String, field: Int, type: IndexType?)] = []
        if let local { columns.append(("_local", local, nil)) }
        var filters: [(filter: SoupValueFilter, field: Int, type: IndexType)] = []
        let tracked = valueFilters(for: table)
        var valueIndex = 0
        for (index, column) in zip(table.spec.indexes, table.columns) {
            defer { if column != nil { valueIndex += 1 } }
            let head = String(index.path.prefix { $0 != "." })
            guard let field = names.firstIndex(of: head) else { continue }
            if head != index.path || index.type == .fullText || head == SyncField.soupLastModifiedDate { throw PatchRefused() }
            guard let column else { continue }
            columns.append((column, field, index.type))
            for (filter, position) in tracked where position == valueIndex { filters.append((filter, field, index.type)) }
        }
        return (columns, filters)
    }

    /// The arrays ``rewrite(_:names:values:reading:into:confirming:confirmed:scratch:)`` fills
    /// for each entry, kept from one entry to the next rather than allocated for each.
    private struct RewriteScratch {
        var present: [Bool] = []
        var patchedAt: [Int?] = []
    }

    /// Writes `text` (an object) into `output` with the members named in `names` given `values`
    /// (`nil`: removed; those absent added before `_soupEntryId`, else at the end; the last name
    /// is the store's `_soupLastModifiedDate`), the others copied; with `confirming`, the data
    /// fields of the result into `confirmed` too. Returns the values of the members `reading`
    /// names, as they were in `text`.
    private static func rewrite(_ text: [UInt8], names: [[UInt8]], values: [[UInt8]?], reading: [[UInt8]],
                                into output: inout [UInt8], confirming: Bool, confirmed: inout [UInt8],
                                scratch: inout RewriteScratch) throws -> [JSONValue?] {
        guard let members = try? JSONParser.members(of: text) else { throw PatchRefused() }
        // First which members are patched (and which patched names are absent), and what is read.
        var read = [JSONValue?](repeating: nil, count: reading.count)
        scratch.present.removeAll(keepingCapacity: true)
        scratch.present.append(contentsOf: repeatElement(false, count: names.count))
        scratch.patchedAt.removeAll(keepingCapacity: true)
        scratch.patchedAt.append(contentsOf: repeatElement(nil, count: members.count))
        for (index, member) in members.enumerated() {
            let name = text[member.name]
            if name.contains(UInt8(ascii: "\\")) { throw PatchRefused() }
            if let position = reading.firstIndex(where: { $0.count == name.count && $0.elementsEqual(name) }) {
                guard let value = try? JSONParser.parse(text[member.value]).value else { throw PatchRefused() }
                read[position] = value
            }
            if let position = names.firstIndex(where: { $0.count == name.count && $0.elementsEqual(name) }) {
                if scratch.present[position] { throw PatchRefused() }
                scratch.present[position] = true
                scratch.patchedAt[index] = position
            }
        }
        output.removeAll(keepingCapacity: true)
        output.append(UInt8(ascii: "{"))
        confirmed.removeAll(keepingCapacity: true)
        confirmed.append(UInt8(ascii: "{"))
        func append(_ name: ArraySlice<UInt8>, _ value: ArraySlice<UInt8>) {
            if output.count > 1 { output.append(UInt8(ascii: ",")) }
            Self.appendMember(name, value, to: &output)
            if confirming && JSONObject.isDataField(utf8: name) {
                if confirmed.count > 1 { confirmed.append(UInt8(ascii: ",")) }
                Self.appendMember(name, value, to: &confirmed)
            }
        }
        // The absent ones go before the two members the store keeps last (its date is patched in place).
        var absentAdded = false
        func addAbsent() {
            absentAdded = true
            for position in names.indices where !scratch.present[position] {
                if let value = values[position] { append(names[position][...], value[...]) }
            }
        }
        let entryId = Array(SyncField.soupEntryId.utf8)
        for (index, member) in members.enumerated() {
            let name = text[member.name]
            if !absentAdded && name.elementsEqual(entryId) { addAbsent() }
            if let position = scratch.patchedAt[index] {
                if let value = values[position] { append(name, value[...]) }
            } else {
                append(name, text[member.value])
            }
        }
        if !absentAdded { addAbsent() }
        output.append(UInt8(ascii: "}"))
        confirmed.append(UInt8(ascii: "}"))
        return read
    }

    private static func appendMember(_ name: ArraySlice<UInt8>, _ value: ArraySlice<UInt8>, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        output.append(contentsOf: name)
        output.append(contentsOf: "\":".utf8)
        output.append(contentsOf: value)
    }

    /// Whether a field name is written in JSON as it is (no quote, backslash or control character).
    private static func isPlainName(_ name: String) -> Bool {
        !name.utf8.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
    }
}
