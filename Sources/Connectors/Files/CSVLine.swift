/// RFC 4180 lines in memory: Bulk bodies, reports and rejects files (large files are read with
/// the streaming ``CSVReader``).
public enum CSVLine {
    /// `value` as one field: quoted, with doubled quotes, when it holds the delimiter, a quote or a line break.
    public static func field(_ value: String, delimiter: Character = ",") -> String {
        guard value.contains(where: { $0 == delimiter || $0 == "\"" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) else { return value }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// One line (no line ending) of fields.
    public static func encode(_ fields: [String], delimiter: Character = ",") -> String {
        fields.map { field($0, delimiter: delimiter) }.joined(separator: String(delimiter))
    }

    /// Splits CSV text (quoted fields, doubled quotes, CRLF or LF) into rows of fields.
    public static func decodeRows(_ text: String) -> [[String]] {
        var rows: [[String]] = []
        var row: [String] = []
        var field = ""
        var quoted = false
        var scalars = text.unicodeScalars.makeIterator()
        var pending: Unicode.Scalar? = scalars.next()
        while let scalar = pending {
            pending = scalars.next()
            if quoted {
                if scalar == "\"" {
                    if pending == "\"" { field.unicodeScalars.append("\""); pending = scalars.next() } else { quoted = false }
                } else {
                    field.unicodeScalars.append(scalar)
                }
            } else if scalar == "\"" {
                quoted = true
            } else if scalar == "," {
                row.append(field)
                field = ""
            } else if scalar == "\n" || scalar == "\r" {
                if scalar == "\r" && pending == "\n" { pending = scalars.next() }
                row.append(field)
                rows.append(row)
                row = []
                field = ""
            } else {
                field.unicodeScalars.append(scalar)
            }
        }
        if !field.isEmpty || !row.isEmpty { row.append(field); rows.append(row) }
        return rows
    }
}
