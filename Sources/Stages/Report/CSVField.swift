/// RFC 4180 quoting for the CSV files a run writes (reports, rejects).
enum CSVField {
    /// `value` as one field: quoted, with doubled quotes, when it holds the delimiter, a quote or a line break.
    static func quote(_ value: String, delimiter: Character = ",") -> String {
        guard value.contains(where: { $0 == delimiter || $0 == "\"" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) else { return value }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
