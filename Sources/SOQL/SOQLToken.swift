/// One lexical token of SOQL text, with the text it was read from and where it starts.
struct SOQLToken: Sendable {
    enum Kind: Sendable, Equatable {
        /// An identifier, or a dotted path of identifiers (`Account.Owner.Name`).
        case name([String])
        /// A quoted string, escapes resolved (a backslash before `%` or `_` is kept for LIKE).
        case string(String)
        case integer(Int64)
        case decimal(Double)
        case date(SOQLDate)
        case dateTime(SOQLDateTime)
        /// Punctuation or a comparison operator: `( ) , : = != <> < <= > >=`.
        case symbol(String)
        case end
    }

    let kind: Kind
    /// The token as written, for error messages.
    let text: String
    let position: SOQLSourcePosition

    /// The upper-cased word when the token is a single identifier, for case-insensitive keywords.
    var keyword: String? {
        if case .name(let components) = kind, components.count == 1 { return components[0].uppercased() }
        return nil
    }

    func isKeyword(_ word: String) -> Bool { keyword == word }

    func isSymbol(_ symbol: String) -> Bool { kind == .symbol(symbol) }

    /// How Salesforce names this token in `unexpected token: …`.
    var quoted: String {
        kind == .end ? "<EOF>" : "'\(text)'"
    }
}
