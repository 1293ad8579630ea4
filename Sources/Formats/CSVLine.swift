/// The one CSV writer (RFC 4180): a field is quoted, its quotes doubled, when it holds the
/// delimiter, a quote or a line break — or always, with `quoteAll`. Rows are read back with
/// ``CSVReader``.
public enum CSVLine {
    /// `value` as one field.
    public static func field(_ value: String, delimiter: Character = ",", quoteAll: Bool = false) -> String {
        // An ASCII delimiter (the usual case) is looked for among the bytes with the rest.
        let special = delimiter.asciiValue.map { byte in
            value.utf8.contains { $0 == byte || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }
        } ?? (value.unicodeScalars.contains(where: { $0 == "\"" || $0 == "\n" || $0 == "\r" }) || value.contains(delimiter))
        guard quoteAll || special else { return value }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// One line (no line ending) of fields.
    public static func encode(_ fields: [String], delimiter: Character = ",", quoteAll: Bool = false) -> String {
        fields.map { field($0, delimiter: delimiter, quoteAll: quoteAll) }.joined(separator: String(delimiter))
    }
}
