import Foundation

/// A SOSL search as the emulator serves it: `FIND {terms} [IN ALL | NAME | EMAIL | PHONE FIELDS]
/// [RETURNING Object [(fields [WHERE …] [ORDER BY …] [LIMIT n])], …] [LIMIT n]`. Terms are words
/// (a trailing `*` or inner `?` as wildcards) and "quoted phrases", all required unless joined by
/// `OR`; words match whole words of a field, case-insensitively, as an org's search index does.
struct SOSLSearch {
    enum Scope: String {
        case all = "ALL", name = "NAME", email = "EMAIL", phone = "PHONE"
    }

    /// One object of `RETURNING`: its field list and the rest of its clause (`WHERE …`), as SOQL text.
    struct Returning {
        var object: String
        var fields: String?
        var clauses: String
    }

    /// Alternatives (`OR`), each a list of patterns that must all match.
    var alternatives: [[NSRegularExpression]]
    var scope: Scope = .all
    var returning: [Returning] = []
    var limit: Int = 2000

    static func malformed(_ message: String) -> APIError {
        APIError(400, "MALFORMED_SEARCH", message)
    }

    init(_ text: String) throws(APIError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.uppercased().hasPrefix("FIND"), let open = trimmed.firstIndex(of: "{"),
              trimmed[trimmed.index(trimmed.startIndex, offsetBy: 4)..<open].allSatisfy(\.isWhitespace),
              let close = trimmed[open...].firstIndex(of: "}") else {
            throw Self.malformed("No search term found. The search term must be enclosed in braces: FIND {term}")
        }
        alternatives = try Self.terms(String(trimmed[trimmed.index(after: open)..<close]))
        var rest = Substring(trimmed[trimmed.index(after: close)...])
        func keyword(_ word: String) -> Bool {
            let stripped = rest.drop { $0.isWhitespace }
            guard stripped.uppercased().hasPrefix(word),
                  stripped.dropFirst(word.count).first.map({ $0.isWhitespace || $0 == "(" }) ?? true else { return false }
            rest = stripped.dropFirst(word.count)
            return true
        }
        if keyword("IN") {
            let words = rest.split(whereSeparator: \.isWhitespace).prefix(2)
            guard words.count == 2, let scope = Scope(rawValue: words.first!.uppercased()), words.last!.uppercased() == "FIELDS" else {
                throw Self.malformed("IN must name ALL FIELDS, NAME FIELDS, EMAIL FIELDS or PHONE FIELDS")
            }
            self.scope = scope
            rest = rest.drop { $0.isWhitespace }.dropFirst(words[0].count).drop { $0.isWhitespace }.dropFirst(words[1].count)
        }
        if keyword("RETURNING") {
            returning = try Self.returning(&rest)
        }
        if keyword("LIMIT") {
            guard let value = Int(rest.trimmingCharacters(in: .whitespaces)), value > 0 else { throw Self.malformed("LIMIT must be a positive number") }
            limit = min(value, 2000)
            rest = ""
        }
        guard rest.allSatisfy(\.isWhitespace) else {
            throw Self.malformed("unexpected text after the search: \(rest.trimmingCharacters(in: .whitespaces).prefix(40))")
        }
    }

    /// `Account(Id, Name WHERE …), Contact` up to a top-level `LIMIT`.
    private static func returning(_ rest: inout Substring) throws(APIError) -> [Returning] {
        var result: [Returning] = []
        while true {
            rest = rest.drop { $0.isWhitespace }
            let name = rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            guard !name.isEmpty else { throw malformed("RETURNING must name an object") }
            rest = rest.dropFirst(name.count).drop { $0.isWhitespace }
            var item = Returning(object: String(name), fields: nil, clauses: "")
            if rest.first == "(" {
                var depth = 0
                var inQuote = false
                var end: Substring.Index?
                for index in rest.indices {
                    let character = rest[index]
                    if character == "'" { inQuote.toggle() }
                    if inQuote { continue }
                    if character == "(" { depth += 1 }
                    if character == ")" { depth -= 1; if depth == 0 { end = index; break } }
                }
                guard let end else { throw malformed("RETURNING \(name)( is not closed") }
                let inner = rest[rest.index(after: rest.startIndex)..<end]
                rest = rest[rest.index(after: end)...]
                let clauseStart = ["WHERE", "ORDER BY", "LIMIT", "OFFSET"].compactMap { word in
                    inner.range(of: "\\s\(word.replacingOccurrences(of: " ", with: "\\s+"))\\s", options: [.regularExpression, .caseInsensitive])?.lowerBound
                }.min()
                item.fields = String(inner[..<(clauseStart ?? inner.endIndex)]).trimmingCharacters(in: .whitespaces)
                item.clauses = clauseStart.map { String(inner[$0...]) } ?? ""
            }
            result.append(item)
            rest = rest.drop { $0.isWhitespace }
            guard rest.first == "," else { return result }
            rest = rest.dropFirst()
        }
    }

    /// `acme OR "road runner" glob*` as alternatives of required patterns.
    private static func terms(_ text: String) throws(APIError) -> [[NSRegularExpression]] {
        var tokens: [String] = []
        var scanner = Substring(text)
        while let first = scanner.drop(while: \.isWhitespace).first {
            scanner = scanner.drop(while: \.isWhitespace)
            if first == "\"" {
                let body = scanner.dropFirst()
                guard let end = body.firstIndex(of: "\"") else { throw malformed("an unclosed quote in the search term") }
                tokens.append("\"" + body[..<end])
                scanner = body[body.index(after: end)...]
            } else {
                let word = scanner.prefix { !$0.isWhitespace }
                tokens.append(String(word))
                scanner = scanner.dropFirst(word.count)
            }
        }
        var alternatives: [[NSRegularExpression]] = [[]]
        for token in tokens {
            if token.uppercased() == "OR" { alternatives.append([]); continue }
            if token.uppercased() == "AND" { continue }
            alternatives[alternatives.count - 1].append(try pattern(token))
        }
        guard alternatives.allSatisfy({ !$0.isEmpty }) else {
            throw malformed("search term must be longer than one character")
        }
        return alternatives
    }

    private static func pattern(_ token: String) throws(APIError) -> NSRegularExpression {
        let isPhrase = token.hasPrefix("\"")
        let body = isPhrase ? String(token.dropFirst()) : token
        guard body.filter({ $0 != "*" && $0 != "?" }).count >= 2 else {
            throw malformed("search term must be longer than one character: \(body)")
        }
        var regex = ""
        for character in body {
            switch character {
            case "*": regex += "\\w*"
            case "?": regex += "\\w"
            case " ": regex += "\\s+"
            default: regex += NSRegularExpression.escapedPattern(for: String(character))
            }
        }
        do {
            return try NSRegularExpression(pattern: "(?<!\\w)" + regex + "(?!\\w)", options: [.caseInsensitive])
        } catch {
            throw malformed("the search term cannot be read: \(body)")
        }
    }

    /// `true` when the text of a record's searched fields matches the terms.
    func matches(_ values: [String]) -> Bool {
        alternatives.contains { patterns in
            patterns.allSatisfy { pattern in
                values.contains { value in pattern.firstMatch(in: value, range: NSRange(value.startIndex..., in: value)) != nil }
            }
        }
    }
}
