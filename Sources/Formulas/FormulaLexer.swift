/// One token of a formula, at its 1-based column.
struct FormulaToken: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case number(Double)
        case text(String)
        /// A name: a field (`Account.Name`, `Custom__r.Code__c`), a function or a keyword.
        case name(String)
        /// An operator, a parenthesis or a comma.
        case symbol(String)
        case end
    }

    let kind: Kind
    let column: Int
}

/// Splits a formula into tokens. Spaces, line breaks and `/* comments */` separate them.
struct FormulaLexer {
    private static let symbols = ["==", "!=", "<>", "<=", ">=", "&&", "||", "=", "<", ">", "+", "-", "*", "/", "^", "&", "!", "(", ")", ","]

    static func tokens(_ text: String) throws(FormulaSyntaxError) -> [FormulaToken] {
        let characters = Array(text)
        var tokens: [FormulaToken] = []
        var index = 0
        while index < characters.count {
            let character = characters[index]
            let column = index + 1
            if character.isWhitespace { index += 1; continue }
            if character == "/", index + 1 < characters.count, characters[index + 1] == "*" {
                var end = index + 2
                while end + 1 < characters.count, !(characters[end] == "*" && characters[end + 1] == "/") { end += 1 }
                guard end + 1 < characters.count else { throw FormulaSyntaxError(column: column, "comment is not closed (*/)") }
                index = end + 2
                continue
            }
            if character == "\"" || character == "'" {
                let (value, next) = try quotedText(characters, from: index)
                tokens.append(FormulaToken(kind: .text(value), column: column))
                index = next
                continue
            }
            if character.isASCII, character.isNumber || (character == "." && index + 1 < characters.count && characters[index + 1].isASCII && characters[index + 1].isNumber) {
                var end = index
                while end < characters.count, characters[end].isASCII, characters[end].isNumber || characters[end] == "." { end += 1 }
                let literal = String(characters[index..<end])
                guard literal.filter({ $0 == "." }).count <= 1, let value = Double(literal) else {
                    throw FormulaSyntaxError(column: column, "\(literal) is not a number")
                }
                guard value.isFinite, value < 1e18 else { throw FormulaSyntaxError(column: column, "\(literal.prefix(30)) is too large a number") }
                tokens.append(FormulaToken(kind: .number(value), column: column))
                index = end
                continue
            }
            if character.isLetter || character == "_" || character == "$" {
                var end = index
                while end < characters.count, characters[end].isLetter || characters[end].isNumber || characters[end] == "_" || characters[end] == "." || characters[end] == "$" {
                    end += 1
                }
                tokens.append(FormulaToken(kind: .name(String(characters[index..<end])), column: column))
                index = end
                continue
            }
            guard let symbol = symbols.first(where: { matches($0, characters, at: index) }) else {
                throw FormulaSyntaxError(column: column, "unexpected character \(quoted(String(character)))")
            }
            tokens.append(FormulaToken(kind: .symbol(symbol), column: column))
            index += symbol.count
        }
        tokens.append(FormulaToken(kind: .end, column: characters.count + 1))
        return tokens
    }

    private static func matches(_ symbol: String, _ characters: [Character], at index: Int) -> Bool {
        var offset = index
        for character in symbol {
            guard offset < characters.count, characters[offset] == character else { return false }
            offset += 1
        }
        return true
    }

    /// A quoted text literal starting at `start`; a backslash escapes the next character (`\n`,
    /// `\t` and `\r` are line breaks and tabs).
    private static func quotedText(_ characters: [Character], from start: Int) throws(FormulaSyntaxError) -> (String, Int) {
        let quote = characters[start]
        var value = ""
        var index = start + 1
        while index < characters.count {
            let character = characters[index]
            if character == quote { return (value, index + 1) }
            if character == "\\" {
                guard index + 1 < characters.count else { break }
                switch characters[index + 1] {
                case "n": value.append("\n")
                case "t": value.append("\t")
                case "r": value.append("\r")
                default: value.append(characters[index + 1])
                }
                index += 2
                continue
            }
            value.append(character)
            index += 1
        }
        throw FormulaSyntaxError(column: start + 1, "text is not closed (\(quote))")
    }
}
