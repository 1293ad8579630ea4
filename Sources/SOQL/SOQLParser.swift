/// Recursive-descent parser for SOQL SELECT statements and bare WHERE conditions.
///
/// Every failure is a `MALFORMED_QUERY` `SOQLError` at the offending token. Supported: select lists with
/// field paths, aggregates and parent-to-child subqueries; `FROM` with alias; `WHERE`; `WITH`;
/// `GROUP BY` with `HAVING` (comparisons of grouped fields and aggregates); `ORDER BY`; `LIMIT`;
/// `OFFSET`; `FOR VIEW | REFERENCE | UPDATE`. Anything else is an unexpected token.
struct SOQLParser {
    /// Salesforce's reserved keywords, which cannot name a field, an object or an alias.
    static let reservedWords: Set<String> = [
        "AND", "ASC", "DESC", "EXCLUDES", "FIRST", "FROM", "GROUP", "HAVING", "IN", "INCLUDES", "LAST", "LIKE",
        "LIMIT", "NOT", "NULL", "NULLS", "OR", "SELECT", "WHERE", "WITH",
    ]
    /// Words that cannot be an alias because a clause may start with them.
    static let nonAliasWords = reservedWords.union(["ORDER", "OFFSET", "FOR", "USING", "ALL"])
    /// How deep parentheses, `NOT`s and subqueries may nest, so hostile input cannot exhaust the stack.
    static let maximumDepth = 32

    private let source: String
    private let tokens: [SOQLToken]
    private var index = 0
    private var depth = 0
    /// Parsing a `HAVING` clause: a comparison may start with an aggregate.
    private var inHaving = false

    private init(_ source: String) throws(SOQLError) {
        self.source = source
        self.tokens = try SOQLLexer.tokenize(source)
    }

    /// Parses a whole `SELECT` statement.
    static func parseQuery(_ text: String) throws(SOQLError) -> SOQLQuery {
        var parser = try SOQLParser(text)
        let query = try parser.query()
        try parser.expectEnd()
        return query
    }

    /// Parses a bare condition, as written after `WHERE`.
    static func parseCondition(_ text: String) throws(SOQLError) -> SOQLCondition {
        var parser = try SOQLParser(text)
        let condition = try parser.condition()
        try parser.expectEnd()
        return condition
    }

    /// Checks that `text` is one identifier (or, with `allowingPath`, a dotted path) and not reserved.
    static func name(_ text: String, allowingPath: Bool) throws(SOQLError) -> [String] {
        var parser = try SOQLParser(text)
        let token = parser.current
        guard case .name(let components) = token.kind, allowingPath || components.count == 1,
            !(token.keyword.map(reservedWords.contains) ?? false)
        else { throw parser.unexpected(token) }
        parser.advance()
        try parser.expectEnd()
        return components
    }

    /// Checks that `text` can be an alias.
    static func alias(_ text: String) throws(SOQLError) -> String {
        var parser = try SOQLParser(text)
        guard let alias = parser.takeAlias() else { throw parser.unexpected(parser.current) }
        try parser.expectEnd()
        return alias
    }

    // MARK: Statement

    private mutating func query() throws(SOQLError) -> SOQLQuery {
        try expectKeyword("SELECT")
        var select = [try selectItem()]
        while takeSymbol(",") { select.append(try selectItem()) }
        try expectKeyword("FROM")
        var query = SOQLQuery(select: select, from: try objectReference())
        if takeKeyword("WHERE") { query.whereCondition = try condition() }
        if takeKeyword("WITH") { query.withClause = try oneOf(["SECURITY_ENFORCED", "USER_MODE", "SYSTEM_MODE"]) }
        if takeKeyword("GROUP") {
            try expectKeyword("BY")
            query.groupBy = [try fieldPath()]
            while takeSymbol(",") { query.groupBy.append(try fieldPath()) }
            if takeKeyword("HAVING") {
                inHaving = true
                query.having = try condition()
                inHaving = false
            }
        }
        if takeKeyword("ORDER") {
            try expectKeyword("BY")
            query.orderBy = [try ordering()]
            while takeSymbol(",") { query.orderBy.append(try ordering()) }
        }
        if takeKeyword("LIMIT") { query.limit = try count() }
        if takeKeyword("OFFSET") { query.offset = try count() }
        if takeKeyword("FOR") { query.forClause = try oneOf(["VIEW", "REFERENCE", "UPDATE"]) }
        if let alias = query.from.alias { query = Self.removingAlias(alias, from: query) }
        return query
    }

    /// One of `words` (upper-cased), or an error at the current token.
    private mutating func oneOf(_ words: [String]) throws(SOQLError) -> String {
        guard let word = current.keyword, words.contains(word) else { throw unexpected(current) }
        advance()
        return word
    }

    private mutating func selectItem() throws(SOQLError) -> SOQLSelectItem {
        let token = current
        if token.isSymbol("(") {
            try enterNested()
            advance()
            let subquery = try query()
            try expectSymbol(")")
            depth -= 1
            return .subquery(subquery)
        }
        guard let word = token.keyword, tokens[index + 1].isSymbol("(") else { return .field(try fieldPath()) }
        if word == "TOLABEL" {
            advance()
            advance()
            let field = try fieldPath()
            try expectSymbol(")")
            return .label(field)
        }
        guard let function = SOQLAggregate.Function(rawValue: word) else { throw unexpected(token) }
        advance()
        advance()
        if function == .count, takeSymbol(")") { return .count }
        let field = try fieldPath()
        try expectSymbol(")")
        return .aggregate(SOQLAggregate(function: function, field: field, alias: takeAlias()))
    }

    private mutating func objectReference() throws(SOQLError) -> SOQLObjectReference {
        let token = current
        guard let word = token.keyword, !Self.reservedWords.contains(word) else { throw unexpected(token) }
        advance()
        return SOQLObjectReference(name: token.text, alias: takeAlias(), position: token.position)
    }

    private mutating func takeAlias() -> String? {
        guard let word = current.keyword, !Self.nonAliasWords.contains(word) else { return nil }
        defer { advance() }
        return current.text
    }

    private mutating func fieldPath() throws(SOQLError) -> SOQLFieldPath {
        let token = current
        guard case .name(let components) = token.kind, !(token.keyword.map(Self.reservedWords.contains) ?? false)
        else { throw unexpected(token) }
        advance()
        return SOQLFieldPath(components: components, position: token.position)
    }

    private mutating func ordering() throws(SOQLError) -> SOQLOrdering {
        var ordering = SOQLOrdering(try fieldPath())
        if takeKeyword("DESC") {
            ordering.direction = .descending
        } else {
            _ = takeKeyword("ASC")
        }
        if takeKeyword("NULLS") {
            if takeKeyword("FIRST") {
                ordering.nulls = .first
            } else {
                try expectKeyword("LAST")
                ordering.nulls = .last
            }
        }
        return ordering
    }

    /// A non-negative integer, for `LIMIT` and `OFFSET`.
    private mutating func count() throws(SOQLError) -> Int {
        let token = current
        guard case .integer(let value) = token.kind, value >= 0, let count = Int(exactly: value) else {
            throw unexpected(token)
        }
        advance()
        return count
    }

    // MARK: Conditions

    private mutating func condition() throws(SOQLError) -> SOQLCondition {
        let first = try unaryCondition()
        guard let connective = current.keyword, connective == "AND" || connective == "OR" else { return first }
        var members = [first]
        while takeKeyword(connective) { members.append(try unaryCondition()) }
        if current.isKeyword("AND") || current.isKeyword("OR") { throw unexpected(current) }
        return connective == "AND" ? .and(members) : .or(members)
    }

    private mutating func unaryCondition() throws(SOQLError) -> SOQLCondition {
        if current.isKeyword("NOT") {
            try enterNested()
            advance()
            let negated = try unaryCondition()
            depth -= 1
            return .not(negated)
        }
        if current.isSymbol("(") {
            try enterNested()
            advance()
            let grouped = try condition()
            try expectSymbol(")")
            depth -= 1
            return grouped
        }
        return .comparison(try comparison())
    }

    private mutating func comparison() throws(SOQLError) -> SOQLComparison {
        if inHaving, let word = current.keyword, tokens[index + 1].isSymbol("("), let function = SOQLAggregate.Function(rawValue: word) {
            let position = current.position
            advance()
            advance()
            let field = function == .count && current.isSymbol(")") ? SOQLFieldPath(components: ["Id"], position: position) : try fieldPath()
            try expectSymbol(")")
            let `operator` = try comparisonOperator()
            guard !`operator`.takesList else { throw unexpected(tokens[index - 1]) }
            var comparison = SOQLComparison(field, `operator`, .value(try value()))
            comparison.aggregate = function
            return comparison
        }
        let field = try fieldPath()
        let `operator` = try comparisonOperator()
        guard `operator`.takesList else { return SOQLComparison(field, `operator`, .value(try value())) }
        if `operator` == .in || `operator` == .notIn, current.isSymbol("("), tokens[index + 1].isKeyword("SELECT") {
            try enterNested()
            advance()
            let subquery = try query()
            try expectSymbol(")")
            depth -= 1
            return SOQLComparison(field, `operator`, .subquery(subquery))
        }
        try expectSymbol("(")
        var values = [try value()]
        while takeSymbol(",") { values.append(try value()) }
        try expectSymbol(")")
        return SOQLComparison(field, `operator`, .list(values))
    }

    private mutating func comparisonOperator() throws(SOQLError) -> SOQLComparisonOperator {
        let token = current
        advance()
        switch token.kind {
        case .symbol("<>"): return .notEqual
        case .symbol(let symbol):
            if let comparison = SOQLComparisonOperator(rawValue: symbol) { return comparison }
        case .name:
            switch token.keyword {
            case "LIKE": return .like
            case "IN": return .in
            case "INCLUDES": return .includes
            case "EXCLUDES": return .excludes
            case "NOT":
                try expectKeyword("IN")
                return .notIn
            default: break
            }
        default: break
        }
        throw unexpected(token)
    }

    private mutating func value() throws(SOQLError) -> SOQLValue {
        let token = current
        advance()
        switch token.kind {
        case .string(let string): return .string(string)
        case .integer(let integer): return .integer(integer)
        case .decimal(let decimal): return .decimal(decimal)
        case .date(let date): return .date(date)
        case .dateTime(let dateTime): return .dateTime(dateTime)
        case .name:
            guard let word = token.keyword else { throw unexpected(token) }
            switch word {
            case "NULL": return .null
            case "TRUE": return .boolean(true)
            case "FALSE": return .boolean(false)
            default: return try dateLiteral(word, token: token)
            }
        default:
            throw unexpected(token)
        }
    }

    /// A date literal whose name was just read; reads `:n` when it takes one.
    private mutating func dateLiteral(_ word: String, token: SOQLToken) throws(SOQLError) -> SOQLValue {
        guard takeSymbol(":") else {
            if let literal = SOQLDateLiteral(name: word, argument: nil) { return .dateLiteral(literal) }
            throw unexpected(SOQLDateLiteral(name: word, argument: 0) == nil ? token : current)
        }
        let argumentToken = current
        guard case .integer(let value) = argumentToken.kind, value >= 0, let argument = Int(exactly: value) else {
            throw unexpected(argumentToken)
        }
        guard let literal = SOQLDateLiteral(name: word, argument: argument) else { throw unexpected(token) }
        advance()
        return .dateLiteral(literal)
    }

    // MARK: Aliases

    private static func removingAlias(_ alias: String, from query: SOQLQuery) -> SOQLQuery {
        var query = query
        query.groupBy = query.groupBy.map { removingAlias(alias, from: $0) }
        query.having = query.having.map { removingAlias(alias, from: $0) }
        query.select = query.select.map { item in
            switch item {
            case .field(let field): return .field(removingAlias(alias, from: field))
            case .label(let field): return .label(removingAlias(alias, from: field))
            case .aggregate(var aggregate):
                aggregate.field = removingAlias(alias, from: aggregate.field)
                return .aggregate(aggregate)
            case .count, .subquery: return item
            }
        }
        query.whereCondition = query.whereCondition.map { removingAlias(alias, from: $0) }
        query.orderBy = query.orderBy.map { ordering in
            var ordering = ordering
            ordering.field = removingAlias(alias, from: ordering.field)
            return ordering
        }
        return query
    }

    private static func removingAlias(_ alias: String, from condition: SOQLCondition) -> SOQLCondition {
        switch condition {
        case .and(let members): return .and(members.map { removingAlias(alias, from: $0) })
        case .or(let members): return .or(members.map { removingAlias(alias, from: $0) })
        case .not(let negated): return .not(removingAlias(alias, from: negated))
        case .comparison(var comparison):
            comparison.field = removingAlias(alias, from: comparison.field)
            return .comparison(comparison)
        }
    }

    private static func removingAlias(_ alias: String, from field: SOQLFieldPath) -> SOQLFieldPath {
        guard field.components.count > 1, field.components[0].lowercased() == alias.lowercased() else {
            return field
        }
        var field = field
        field.components.removeFirst()
        return field
    }

    // MARK: Tokens

    private var current: SOQLToken { tokens[index] }

    private mutating func advance() {
        if index < tokens.count - 1 { index += 1 }
    }

    private mutating func takeKeyword(_ word: String) -> Bool {
        guard current.isKeyword(word) else { return false }
        advance()
        return true
    }

    private mutating func takeSymbol(_ symbol: String) -> Bool {
        guard current.isSymbol(symbol) else { return false }
        advance()
        return true
    }

    private mutating func expectKeyword(_ word: String) throws(SOQLError) {
        guard takeKeyword(word) else { throw unexpected(current) }
    }

    private mutating func expectSymbol(_ symbol: String) throws(SOQLError) {
        guard takeSymbol(symbol) else { throw unexpected(current) }
    }

    private func expectEnd() throws(SOQLError) {
        guard current.kind == .end else { throw unexpected(current) }
    }

    private mutating func enterNested() throws(SOQLError) {
        depth += 1
        guard depth <= Self.maximumDepth else {
            let detail = "nesting deeper than \(Self.maximumDepth) levels"
            throw SOQLError(.malformedQuery, detail, at: current.position, in: source)
        }
    }

    private func unexpected(_ token: SOQLToken) -> SOQLError {
        SOQLError(.malformedQuery, "unexpected token: \(token.quoted)", at: token.position, in: source)
    }
}
