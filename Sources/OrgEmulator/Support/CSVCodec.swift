/// RFC 4180 CSV for Bulk API 2.0 bodies: quoted fields, doubled quotes, embedded delimiters and
/// line breaks, LF or CRLF.
enum CSVCodec {
    /// The delimiter characters Bulk API 2.0 names.
    static func delimiter(named name: String) -> Character? {
        ["COMMA": ",", "TAB": "\t", "PIPE": "|", "SEMICOLON": ";", "CARET": "^", "BACKQUOTE": "`"][name]
    }

    /// Parses `text` into rows of fields; throws a message naming the line on a stray quote.
    static func parse(_ text: String, delimiter: Character = ",") throws(CSVError) -> [[String]] {
        var rows: [[String]] = []
        var row: [String] = []
        var field = ""
        var inQuotes = false
        var quotedField = false
        var line = 1
        let scalars = Array(text.unicodeScalars)
        let delimiterScalar = delimiter.unicodeScalars.first!
        var index = 0
        if scalars.first == "\u{FEFF}" { index = 1 }
        while index < scalars.count {
            let scalar = scalars[index]
            if inQuotes {
                if scalar == "\"" {
                    if index + 1 < scalars.count && scalars[index + 1] == "\"" {
                        field.unicodeScalars.append("\"")
                        index += 1
                    } else {
                        inQuotes = false
                    }
                } else {
                    if scalar == "\n" { line += 1 }
                    field.unicodeScalars.append(scalar)
                }
            } else if scalar == "\"" {
                guard field.isEmpty && !quotedField else { throw CSVError(line: line, message: "a quote inside an unquoted field") }
                inQuotes = true
                quotedField = true
            } else if scalar == delimiterScalar {
                row.append(field)
                field = ""
                quotedField = false
            } else if scalar == "\r" || scalar == "\n" {
                if scalar == "\r" && index + 1 < scalars.count && scalars[index + 1] == "\n" { index += 1 }
                row.append(field)
                rows.append(row)
                row = []
                field = ""
                quotedField = false
                line += 1
            } else {
                guard !quotedField else { throw CSVError(line: line, message: "text after a closing quote") }
                field.unicodeScalars.append(scalar)
            }
            index += 1
        }
        if inQuotes { throw CSVError(line: line, message: "a quoted field is not closed") }
        if !field.isEmpty || !row.isEmpty || quotedField {
            row.append(field)
            rows.append(row)
        }
        return rows
    }

    /// One CSV line (no line ending), quoting fields that need it, or every field when `quoteAll`.
    static func line(_ fields: [String], delimiter: Character = ",", quoteAll: Bool = false) -> String {
        fields.map { field in
            let needsQuotes = quoteAll || field.contains(delimiter) || field.contains("\"") || field.contains("\n") || field.contains("\r")
                || field.unicodeScalars.contains { $0 == "\r" || $0 == "\n" }
            return needsQuotes ? "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : field
        }.joined(separator: String(delimiter))
    }
}

/// A CSV syntax error with its 1-based line.
struct CSVError: Error {
    var line: Int
    var message: String
}
