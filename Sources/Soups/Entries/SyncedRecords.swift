import GRDB
import JSON

/// Records as the org sent them, each to be stored as the clean entry of sync `syncId` it makes
/// (``JSONObject/synced(syncId:)``) — prepared from their bytes, not built into objects and
/// written out again (``SoupStore/prepare(_:)`` for a ``SoupMerge`` of records).
public struct SyncedRecords: Sendable {
    public var records: RawJSONObjects
    /// The sync written into each entry's `__sync_id__`.
    public var syncId: Int64

    public init(_ records: RawJSONObjects, syncId: Int64) {
        self.records = records
        self.syncId = syncId
    }

    /// The entries the records make, built (``JSONObject/synced(syncId:)``).
    func entries(for soup: String) throws -> [JSONObject] {
        try (0..<records.count).map { try entry(at: $0, for: soup) }
    }

    /// The entry the record at `position` makes, built; a record that is not valid JSON fails
    /// naming `soup` and its place in its page.
    func entry(at position: Int, for soup: String) throws -> JSONObject {
        do {
            return try records.object(at: position).synced(syncId: syncId)
        } catch {
            throw SoupStoreError.invalidRecord(soup: soup, reason: error.description)
        }
    }
}

/// What preparing the records of one sync for one soup needs besides each record, made once.
struct SyncedRecordForm {
    let table: SoupTable
    /// The fields the store gives every entry of the sync, as an object (seeding the values the
    /// index columns are read from) and as the JSON appended to each record's members.
    let syncFields: JSONObject
    let syncFieldsJSON: [UInt8]
    /// The first name of each index path, as bytes and as text: the members whose values the index
    /// columns need.
    let indexedNames: [(utf8: [UInt8], name: String)]

    init(table: SoupTable, syncId: Int64) {
        self.table = table
        syncFields = JSONObject().synced(syncId: syncId)
        var json: [UInt8] = []
        syncFields.write(into: &json, including: { _ in true })
        syncFieldsJSON = Array(json.dropFirst().dropLast())
        var names: [(utf8: [UInt8], name: String)] = []
        for (index, column) in zip(table.spec.indexes, table.columns) where column != nil {
            let name = String(index.path.prefix { $0 != "." })
            if !names.contains(where: { $0.name == name }) { names.append((Array(name.utf8), name)) }
        }
        indexedNames = names
    }
}

extension PreparedEntry {
    /// `"attributes"` as bytes: the one member of a record that is neither data nor set by the store.
    private static let attributesName = Array("attributes".utf8)

    /// The entry the record at `range` of `bytes` makes for `form`'s sync, prepared from the
    /// record's bytes with its data fields confirmed — the same JSON text, column values and
    /// confirmed values as preparing the built entry (``JSONObject/synced(syncId:)``) gives.
    /// `nil` when the record must be built to be prepared the same: a member name that is not
    /// plain ASCII or repeats (``JSONParser/copyObject(in:at:into:members:)``), or a member the
    /// store sets itself (`__…__` and `_soup…` fields).
    init?(record range: Range<Int>, in bytes: [UInt8], form: SyncedRecordForm) throws {
        var json: [UInt8] = []
        json.reserveCapacity(range.count + form.syncFieldsJSON.count + 2)
        var members: [(name: Range<Int>, value: Range<Int>)] = []
        members.reserveCapacity(form.indexedNames.count + 8)
        guard try JSONParser.copyObject(in: bytes, at: range, into: &json, members: &members) else { return nil }
        var confirmed: [UInt8] = []
        confirmed.reserveCapacity(json.count)
        confirmed.append(UInt8(ascii: "{"))
        var indexed = form.syncFields
        for (name, value) in members {
            let isAttributes = json[name].elementsEqual(Self.attributesName)
            guard isAttributes || JSONObject.isDataField(utf8: json[name]) else { return nil }
            if let field = form.indexedNames.first(where: { $0.utf8.elementsEqual(json[name]) }) {
                indexed[field.name] = try JSONParser.parseValue(in: json, at: value)
            }
            guard !isAttributes else { continue }
            if confirmed.count > 1 { confirmed.append(UInt8(ascii: ",")) }
            // The member as written: its name's quotes, the colon, its value.
            confirmed.append(contentsOf: json[(name.lowerBound - 1)..<value.upperBound])
        }
        confirmed.append(UInt8(ascii: "}"))
        // The record's members, then the sync fields, as writing the built entry orders them.
        json.removeLast()
        if !members.isEmpty { json.append(UInt8(ascii: ",")) }
        json.append(contentsOf: form.syncFieldsJSON)
        json.append(UInt8(ascii: "}"))
        self.entry = nil
        self.json = json
        self.confirmed = confirmed
        columnValues = Self.columnValues(of: indexed, table: form.table)
        previousColumnValues = nil
    }
}

extension SoupStore {
    /// The entries `records` make, prepared on both cores from the records' bytes; a record that
    /// cannot be (see ``PreparedEntry/init(record:in:form:)``) is built and prepared as an entry.
    func prepare(_ records: SyncedRecords, for soupName: String) async throws -> PreparedEntries {
        let table = try await pool.read { db in try SoupTable.load(db, soupName: soupName) }
        let form = SyncedRecordForm(table: table, syncId: records.syncId)
        let raw = records.records
        let prepared = try await Array(raw.ranges.indices).concurrentMap { position in
            let copied: PreparedEntry?
            do {
                copied = try PreparedEntry(record: raw.ranges[position], in: raw.bytes, form: form)
            } catch let error as JSONSyntaxError {
                throw SoupStoreError.invalidRecord(soup: soupName, reason: error.description)
            }
            return try copied ?? PreparedEntry(try records.entry(at: position, for: soupName), table: table, confirming: true)
        }
        return PreparedEntries(soupName: soupName, table: table, entries: prepared)
    }
}
