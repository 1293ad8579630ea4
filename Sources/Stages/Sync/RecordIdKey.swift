import JSON

/// Salesforce ids compared on their case-sensitive 15-character form, so a 15-character id and its
/// 18-character spelling are the same record.
enum RecordIdKey {
    static func of(_ value: JSONValue?) -> String {
        String((value?.stringValue ?? "").prefix(15))
    }
}
