import JSON

/// The CSV table of a Bulk API ingest job: the columns (`Id` for updates and deletes, the external
/// id for upserts, then every field sent, in order of first appearance; a parent by external id
/// as `Account.External_Id__c`) and one row per record.
/// A resumed run rebuilds a job's rows from the journal, under the columns the job's result files
/// name, to read its results back.
struct SyncUpBulkTable {
    var columns: [String] = []
    var rows: [[String?]] = []

    /// - Parameter records: per record, the fields sent, its server id and its external id value.
    /// - Parameter columns: the columns to use (a job's, when the records join one), instead of
    ///   those the records make.
    init(kind: SyncUpOperation.Kind, externalIdField: String?, columns given: [String]? = nil,
         records: [(fields: JSONObject, recordId: String?, externalIdValue: String?)]) {
        columns = given ?? (kind == .update || kind == .delete ? ["Id"] : [])
        if given == nil, kind == .upsert, let externalIdField { columns.append(externalIdField) }
        if given == nil, kind != .delete {
            var seen = Set(columns)
            for record in records {
                for (name, value) in record.fields where seen.insert(Self.column(name, value)).inserted { columns.append(Self.column(name, value)) }
            }
        }
        rows = records.map { record in
            columns.map { column -> String? in
                if column == "Id" && (kind == .update || kind == .delete) { return record.recordId }
                if column == externalIdField && kind == .upsert { return record.externalIdValue }
                guard let value = Self.value(of: column, in: record.fields) else { return nil }
                switch value {
                case .null: return "#N/A"
                case .string(let text): return text
                case .bool(let flag): return flag ? "true" : "false"
                default: return value.jsonString
                }
            }
        }
    }

    /// A field's column: a parent by external id, `{"Account": {"External_Id__c": …}}`, is the
    /// `Account.External_Id__c` column Bulk uploads take.
    private static func column(_ name: String, _ value: JSONValue) -> String {
        guard case .object(let reference) = value, reference.count == 1, let key = reference.keys.first else { return name }
        return name + "." + key
    }

    private static func value(of column: String, in fields: JSONObject) -> JSONValue? {
        if let value = fields[column] { return value }
        guard let (relationship, key) = SyncUpRecord.parentReference(column) else { return nil }
        return fields[relationship]?.objectValue?[key]
    }
}
