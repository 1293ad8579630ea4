/// Bind variables in SOQL text, as Apex writes them: `Name = :ACCOUNT_NAME`. Each `:NAME` outside
/// a quoted literal becomes the value as an escaped string literal, so a value can never change
/// the query's shape (`nobody' OR Name != 'nobody` stays one string).
public enum SOQLBinding {
    /// The text with every bind replaced; `unset` lists the names that have no value (the text
    /// keeps them). Text that cannot be tokenized is returned as it is, for the parser to report.
    public static func bind(_ text: String, values: [String: String]) -> (text: String, unset: [String]) {
        guard text.contains(":"), let tokens = try? SOQLLexer.tokenize(text) else { return (text, []) }
        let scalars = Array(text.unicodeScalars)
        var lineStarts = [0]
        for (offset, scalar) in scalars.enumerated() where scalar == "\n" { lineStarts.append(offset + 1) }
        func offset(_ token: SOQLToken) -> Int { lineStarts[token.position.row - 1] + token.position.column - 1 }

        var output = String.UnicodeScalarView()
        var copied = 0
        var unset: [String] = []
        for (index, token) in tokens.enumerated().dropLast() where token.isSymbol(":") {
            let next = tokens[index + 1]
            guard case .name(let components) = next.kind, components.count == 1, offset(next) == offset(token) + 1 else { continue }
            guard let value = values[components[0]] else {
                unset.append(components[0])
                continue
            }
            output.append(contentsOf: scalars[copied..<offset(token)])
            output.append(contentsOf: SOQL.quote(value).unicodeScalars)
            copied = offset(next) + next.text.unicodeScalars.count
        }
        output.append(contentsOf: scalars[copied...])
        return (String(output), unset)
    }

    /// The names of `${…}` references written inside quoted literals of `text` (before variables
    /// are substituted): a value there is spliced in as text and can end the literal.
    public static func substitutionsInsideLiterals(_ text: String) -> [String] {
        var names: [String] = []
        var inLiteral = false
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if inLiteral && character == "\\" {
                index = text.index(after: index)
                if index < text.endIndex { index = text.index(after: index) }
                continue
            }
            if character == "'" { inLiteral.toggle() }
            if inLiteral, text[index...].hasPrefix("${"), let close = text[index...].firstIndex(of: "}") {
                names.append(String(text[text.index(index, offsetBy: 2)..<close]))
                index = text.index(after: close)
                continue
            }
            index = text.index(after: index)
        }
        return names
    }
}
