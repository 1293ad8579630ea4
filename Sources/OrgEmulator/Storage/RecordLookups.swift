import GRDB

/// Finding live records by the value of a looked-up field (external ids, unique and `idLookup`
/// fields). Each object and field has a partial index, so a lookup is a seek, not a scan of every
/// record of its type — which made loads quadratic in the org's size — and a record of another
/// object pays nothing for it. Each lookup's SQL is written once, here, not on every call: a load
/// checks every row's unique fields.
struct RecordLookups: Sendable {
    /// The lookup statement of each indexed field, by object name, then field name.
    private let statements: [String: [String: String]]

    /// Creates the index of each object's field (when missing) and writes its lookup's SQL.
    init(_ db: Database, indexing fields: [(type: String, field: String)]) throws {
        var statements: [String: [String: String]] = [:]
        for (type, field) in fields {
            // The object name's length keeps `A_B` + `C` apart from `A` + `B_C`.
            let name = "records_by_\(type.count)_" + RecordStore.identifierCharacters("\(type)_\(field)")
            try db.execute(sql: "CREATE INDEX IF NOT EXISTS \"\(name)\" ON records (\(Self.expression(field))) WHERE type = \(RecordStore.literal(type))")
            statements[type, default: [:]][field] = Self.statement(type: type, field: field)
        }
        self.statements = statements
    }

    /// Ids of live records of `type` whose `field` equals `value` (case-insensitively), but `excluding`.
    func ids(_ db: Database, type: String, field: String, equalTo value: String, excluding: String? = nil, limit: Int) throws -> [String] {
        let sql = statements[type]?[field] ?? Self.statement(type: type, field: field)
        // Read through the cursor here: GRDB's fetchAll collects it with an append(contentsOf:)
        // that runs unspecialized from this module, and cost more than the seek.
        let found = try String.fetchCursor(db.cachedStatement(sql: sql), arguments: [value, excluding ?? "", limit])
        var ids: [String] = []
        while let id = try found.next() { ids.append(id) }
        return ids
    }

    /// The SQL of a record's `field` value compared without case, as lookups and their indexes
    /// spell it (the path written out, so SQLite matches it to the index's expression).
    private static func expression(_ field: String) -> String {
        "lower(json_extract(data, '$.\(RecordStore.escapingQuotes(field))'))"
    }

    /// A lookup of `type`'s `field`: the type written out too, so SQLite sees that the object's
    /// partial index applies.
    static func statement(type: String, field: String) -> String {
        """
        SELECT id FROM records WHERE type = \(RecordStore.literal(type)) AND \(expression(field)) = lower(?1) AND isDeleted = 0 AND id != ?2 LIMIT ?3
        """
    }
}
