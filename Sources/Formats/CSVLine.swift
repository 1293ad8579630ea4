/// The one CSV writer (RFC 4180): a field is quoted, its quotes doubled, when it holds the
/// delimiter, a quote or a line break — or always, with `quoteAll`. Rows are read back with
/// ``CSVReader``.
public enum CSVLine {
    /// `value` as one field.
    public static func field(_ value: String, delimiter: Character = ",", quoteAll: Bool = false) -> String {
        guard quoteAll || value.unicodeScalars.contains(where: { $0 == "\"" || $0 == "\n" || $0 == "\r" }) || value.contains(delimiter) else {
            return value
        }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// One line (no line ending) of fields.
    public static func encode(_ fields: [String], delimiter: Character = ",", quoteAll: Bool = false) -> String {
        fields.map { field($0, delimiter: delimiter, quoteAll: quoteAll) }.joined(separator: String(delimiter))
    }
}
