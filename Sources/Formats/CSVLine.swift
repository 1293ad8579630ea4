/// The one CSV writer (RFC 4180): a field is quoted, its quotes doubled, when it holds the
/// delimiter, a quote or a line break — or always, with `quoteAll`. Rows are read back with
/// ``CSVReader``.
public enum CSVLine {
    /// `value` as one field.
    public static func field(_ value: String, delimiter: Character = ",", quoteAll: Bool = false) -> String {
        if let byte = delimiter.asciiValue {
            var bytes: [UInt8] = []
            appendField(value, to: &bytes, delimiter: byte, quoteAll: quoteAll)
            return String(decoding: bytes, as: UTF8.self)
        }
        guard quoteAll || value.unicodeScalars.contains(where: { $0 == "\"" || $0 == "\n" || $0 == "\r" }) || value.contains(delimiter) else {
            return value
        }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// One line (no line ending) of fields.
    public static func encode(_ fields: [String], delimiter: Character = ",", quoteAll: Bool = false) -> String {
        guard let byte = delimiter.asciiValue else {
            return fields.map { field($0, delimiter: delimiter, quoteAll: quoteAll) }.joined(separator: String(delimiter))
        }
        var bytes: [UInt8] = []
        append(fields, to: &bytes, delimiter: byte, quoteAll: quoteAll)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends one line (no line ending) of fields to `bytes`, with an ASCII delimiter: the bytes
    /// of ``encode(_:delimiter:quoteAll:)``, without building strings.
    public static func append(_ fields: some Sequence<String>, to bytes: inout [UInt8], delimiter: UInt8 = UInt8(ascii: ","),
                              quoteAll: Bool = false) {
        var first = true
        for field in fields {
            if !first { bytes.append(delimiter) }
            first = false
            appendField(field, to: &bytes, delimiter: delimiter, quoteAll: quoteAll)
        }
    }

    /// Appends one field to `bytes` (see ``field(_:delimiter:quoteAll:)``), with an ASCII delimiter.
    public static func appendField(_ value: String, to bytes: inout [UInt8], delimiter: UInt8 = UInt8(ascii: ","), quoteAll: Bool = false) {
        let quote = UInt8(ascii: "\"")
        var value = value
        value.withUTF8 { utf8 in
            guard quoteAll || utf8.contains(where: { $0 == delimiter || $0 == quote || $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }) else {
                bytes.append(contentsOf: utf8)
                return
            }
            bytes.append(quote)
            for byte in utf8 {
                if byte == quote { bytes.append(quote) }
                bytes.append(byte)
            }
            bytes.append(quote)
        }
    }
}
