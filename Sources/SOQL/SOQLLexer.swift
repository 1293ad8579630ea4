/// Splits SOQL text into tokens, tracking rows and columns for error messages.
struct SOQLLexer {
    private let source: String
    private let scalars: [Unicode.Scalar]
    private var index = 0
    private var row = 1
    private var lineStart = 0

    init(_ source: String) {
        self.source = source
        self.scalars = Array(source.unicodeScalars)
    }

    /// All tokens of the text, ending with an `.end` token.
    static func tokenize(_ source: String) throws(SOQLError) -> [SOQLToken] {
        var lexer = SOQLLexer(source)
        var tokens: [SOQLToken] = []
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private var position: SOQLSourcePosition {
        SOQLSourcePosition(row: row, column: index - lineStart + 1)
    }

    private func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        index + offset < scalars.count ? scalars[index + offset] : nil
    }

    private mutating func advance() {
        if scalars[index] == "\n" {
            row += 1
            lineStart = index + 1
        }
        index += 1
    }

    private func text(from start: Int) -> String {
        var text = String.UnicodeScalarView()
        text.append(contentsOf: scalars[start..<index])
        return String(text)
    }

    private func error(_ detail: String, at position: SOQLSourcePosition) -> SOQLError {
        SOQLError(.malformedQuery, detail, at: position, in: source)
    }

    private mutating func next() throws(SOQLError) -> SOQLToken {
        while let scalar = peek(), Self.isWhitespace(scalar) { advance() }
        let start = index
        let startPosition = position
        guard let scalar = peek() else { return SOQLToken(kind: .end, text: "", position: startPosition) }
        if Self.isIdentifierStart(scalar) {
            return SOQLToken(kind: .name(scanName()), text: text(from: start), position: startPosition)
        }
        if Self.isDigit(scalar) || (scalar == "-" && peek(1).map(Self.isDigit) == true) {
            return try scanNumberOrDate(start: start, position: startPosition)
        }
        if scalar == "'" {
            return try scanString(start: start, position: startPosition)
        }
        for symbol in ["!=", "<>", "<=", ">=", "(", ")", ",", ":", "=", "<", ">"] where matches(symbol) {
            for _ in symbol.unicodeScalars { advance() }
            return SOQLToken(kind: .symbol(symbol), text: symbol, position: startPosition)
        }
        throw error("no viable alternative at character '\(Character(scalar))'", at: startPosition)
    }

    private func matches(_ symbol: String) -> Bool {
        for (offset, scalar) in symbol.unicodeScalars.enumerated() where peek(offset) != scalar {
            return false
        }
        return true
    }

    /// Reads `name(.name)*`; a dot not followed by an identifier is left for the next token.
    private mutating func scanName() -> [String] {
        var components: [String] = []
        while true {
            let start = index
            while let scalar = peek(), Self.isIdentifierPart(scalar) { advance() }
            components.append(text(from: start))
            guard peek() == ".", let after = peek(1), Self.isIdentifierStart(after) else { return components }
            advance()
        }
    }

    /// Reads an integer, a decimal, a date or a datetime: the longest run of characters these can hold.
    private mutating func scanNumberOrDate(start: Int, position: SOQLSourcePosition) throws(SOQLError) -> SOQLToken {
        advance()
        while let scalar = peek(), Self.isDigit(scalar) || "-+:.TZ".unicodeScalars.contains(scalar) { advance() }
        let text = text(from: start)
        if let value = Int64(text) {
            return SOQLToken(kind: .integer(value), text: text, position: position)
        }
        if Self.isDecimal(text), let value = Double(text) {
            return SOQLToken(kind: .decimal(value), text: text, position: position)
        }
        if let date = SOQLDate(parsing: text) {
            return SOQLToken(kind: .date(date), text: text, position: position)
        }
        if let dateTime = SOQLDateTime(parsing: text, requiringOffset: true) {
            return SOQLToken(kind: .dateTime(dateTime), text: text, position: position)
        }
        throw error("unexpected token: '\(text)'", at: position)
    }

    /// Reads a single-quoted string, resolving `\' \" \\ \n \r \t \b \f \uXXXX`; `\%` and `\_` stay escaped.
    private mutating func scanString(start: Int, position: SOQLSourcePosition) throws(SOQLError) -> SOQLToken {
        advance()
        var value = String.UnicodeScalarView()
        var badEscape: String?
        while true {
            guard let scalar = peek() else {
                throw error("mismatched character '<EOF>' expecting '''", at: self.position)
            }
            advance()
            if scalar == "'" { break }
            guard scalar == "\\" else {
                value.append(scalar)
                continue
            }
            guard let escaped = peek() else { continue }
            advance()
            switch escaped {
            case "'", "\"", "\\": value.append(escaped)
            case "n": value.append("\n")
            case "r": value.append("\r")
            case "t": value.append("\t")
            case "b": value.append("\u{08}")
            case "f": value.append("\u{0C}")
            case "%", "_": value.append(contentsOf: ["\\", escaped])
            case "u":
                if let decoded = scanUnicodeEscape() {
                    value.append(decoded)
                } else {
                    badEscape = badEscape ?? "\\u"
                }
            default: badEscape = badEscape ?? "\\\(Character(escaped))"
            }
        }
        let text = text(from: start)
        if let badEscape {
            throw error(
                "Invalid string literal '\(text.dropFirst().dropLast())'. "
                    + "Illegal character sequence '\(badEscape)' in string literal.",
                at: position)
        }
        return SOQLToken(kind: .string(String(value)), text: text, position: position)
    }

    /// Reads the `XXXX` of `\uXXXX`, and a following `\uXXXX` low surrogate when the first is a high one.
    private mutating func scanUnicodeEscape() -> Unicode.Scalar? {
        guard let code = scanHexQuad() else { return nil }
        guard (0xD800...0xDBFF).contains(code) else { return Unicode.Scalar(code) }
        guard peek() == "\\", peek(1) == "u" else { return nil }
        advance()
        advance()
        guard let low = scanHexQuad(), (0xDC00...0xDFFF).contains(low) else { return nil }
        return Unicode.Scalar(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00))
    }

    /// Reads exactly four hex digits, or nothing when fewer follow.
    private mutating func scanHexQuad() -> UInt32? {
        var code: UInt32 = 0
        for offset in 0..<4 {
            guard let digit = peek(offset).flatMap(Self.hexValue) else { return nil }
            code = code * 16 + digit
        }
        for _ in 0..<4 { advance() }
        return code
    }

    private static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r" || scalar == "\u{0C}"
    }

    private static func isDigit(_ scalar: Unicode.Scalar) -> Bool { ("0"..."9").contains(scalar) }

    private static func isIdentifierStart(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || scalar == "_"
    }

    private static func isIdentifierPart(_ scalar: Unicode.Scalar) -> Bool {
        isIdentifierStart(scalar) || isDigit(scalar)
    }

    private static func hexValue(_ scalar: Unicode.Scalar) -> UInt32? {
        switch scalar {
        case "0"..."9": return scalar.value - 48
        case "a"..."f": return scalar.value - 87
        case "A"..."F": return scalar.value - 55
        default: return nil
        }
    }

    /// `-?digits.digits`, the only decimal form SOQL has.
    private static func isDecimal(_ text: String) -> Bool {
        let body = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        let parts = body.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 2 && parts.allSatisfy { !$0.isEmpty && $0.unicodeScalars.allSatisfy(isDigit) }
    }
}
