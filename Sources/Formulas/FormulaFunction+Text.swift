extension FormulaFunction {
    /// TEXT VALUE UPPER LOWER TRIM LEFT RIGHT MID LEN SUBSTITUTE CONTAINS BEGINS FIND REGEX LPAD RPAD.
    static let text: [FormulaFunction] = [
        eager("TEXT", 1...1, [.any], gives: .text) { arguments, _ in arguments[0].isBlank ? .blank : .text(arguments[0].text) },
        eager("VALUE", 1...1, [.text], gives: .number) { arguments, _ in
            guard case .text(let text) = arguments[0] else { return .blank }
            guard let value = FormulaNumber.parse(text) else { throw FormulaEvaluationError("VALUE: \(quoted(text)) is not a number") }
            return .number(value)
        },
        eager("UPPER", 1...2, [.text], gives: .text) { arguments, _ in textResult(arguments[0].text.uppercased()) },
        eager("LOWER", 1...2, [.text], gives: .text) { arguments, _ in textResult(arguments[0].text.lowercased()) },
        eager("TRIM", 1...1, [.text], gives: .text) { arguments, _ in textResult(arguments[0].text.trimmingSpaces()) },
        eager("LEFT", 2...2, [.text, .number], gives: .text) { arguments, _ in
            let (text, length) = (arguments[0].text, try count(arguments[1], "LEFT"))
            // No more bytes than characters asked for: the whole text, not a copy of it.
            return textResult(text.utf8.count <= length ? text : String(text.prefix(length)))
        },
        eager("RIGHT", 2...2, [.text, .number], gives: .text) { arguments, _ in
            let (text, length) = (arguments[0].text, try count(arguments[1], "RIGHT"))
            return textResult(text.utf8.count <= length ? text : String(text.suffix(length)))
        },
        eager("MID", 3...3, [.text, .number, .number], gives: .text) { arguments, _ in
            let start = max(1, try count(arguments[1], "MID"))
            let text = arguments[0].text
            guard start <= text.count else { return .blank }
            return textResult(String(text.dropFirst(start - 1).prefix(try count(arguments[2], "MID"))))
        },
        eager("LEN", 1...1, [.text], gives: .number) { arguments, _ in .number(Double(arguments[0].text.count)) },
        eager("SUBSTITUTE", 3...3, [.text], gives: .text) { arguments, _ in
            let (text, old) = (arguments[0].text, arguments[1].text)
            guard !old.isEmpty else { return arguments[0] }
            return textResult(text.replacingAll(old, with: arguments[2].text))
        },
        eager("CONTAINS", 2...2, [.text], gives: .boolean) { arguments, _ in
            let compare = arguments[1].text
            return .boolean(compare.isEmpty || arguments[0].text.containsText(compare))
        },
        eager("BEGINS", 2...2, [.text], gives: .boolean) { arguments, _ in
            let compare = arguments[1].text
            return .boolean(compare.isEmpty || arguments[0].text.hasPrefix(compare))
        },
        eager("FIND", 2...3, [.text, .text, .number], gives: .number) { arguments, _ in
            let (search, text) = (arguments[0].text, arguments[1].text)
            let start = arguments.count > 2 ? try count(arguments[2], "FIND") : 1
            guard !search.isEmpty, start >= 1, start <= text.count else { return .number(0) }
            let characters = Array(text), wanted = Array(search)
            guard start - 1 + wanted.count <= characters.count else { return .number(0) }
            for offset in (start - 1)...(characters.count - wanted.count) where characters[offset..<offset + wanted.count].elementsEqual(wanted) {
                return .number(Double(offset + 1))
            }
            return .number(0)
        },
        // A literal pattern is compiled once, by the parser (``FormulaNode/regex(_:_:)``); this
        // body serves patterns computed per record.
        eager("REGEX", 2...2, [.text], gives: .boolean) { arguments, _ in
            let pattern = arguments[1].text
            do {
                return .boolean(try FormulaRegex(pattern).matches(arguments[0].text))
            } catch {
                throw FormulaEvaluationError("REGEX: \(quoted(pattern)) is not a regular expression")
            }
        },
        eager("LPAD", 2...3, [.text, .number, .text], gives: .text) { arguments, _ in
            try pad(arguments, "LPAD") { text, padding in padding + text }
        },
        eager("RPAD", 2...3, [.text, .number, .text], gives: .text) { arguments, _ in
            try pad(arguments, "RPAD") { text, padding in text + padding }
        },
    ]

    /// Empty text is blank.
    static func textResult(_ text: String) -> FormulaValue { text.isEmpty ? .blank : .text(text) }

    /// A count of characters: blank and negative counts are 0, fractions are cut.
    static func count(_ value: FormulaValue, _ function: String) throws(FormulaEvaluationError) -> Int {
        guard case .number(let number) = value else { return 0 }
        guard number.isFinite, abs(number) < 1e9 else { throw FormulaEvaluationError("\(function): \(FormulaNumber.format(number)) is out of range") }
        return max(0, Int(number))
    }

    /// The longest text a pad may make: a long text area's size in the org.
    static let maximumPadding = 131_072

    /// `LPAD` / `RPAD`: pads with `pad_string` (default a space) to the length, or cuts the text to it.
    private static func pad(_ arguments: FormulaArguments, _ function: String, _ join: (String, String) -> String) throws(FormulaEvaluationError) -> FormulaValue {
        let text = arguments[0].text
        let length = try count(arguments[1], function)
        guard length <= maximumPadding else { throw FormulaEvaluationError("\(function): \(length) is longer than \(maximumPadding) characters") }
        guard text.count < length else { return textResult(String(text.prefix(length))) }
        let padding = arguments.count > 2 ? arguments[2].text : " "
        guard !padding.isEmpty else { return textResult(text) }
        let needed = length - text.count
        var fill = String(repeating: padding, count: needed / padding.count + 1)
        fill = String(fill.prefix(needed))
        return textResult(join(text, fill))
    }
}

extension String {
    /// Every occurrence of `old` replaced, comparing characters exactly (no case or accent folding).
    func replacingAll(_ old: String, with new: String) -> String {
        var result = ""
        var rest = self[...]
        while let range = rest.rangeOfText(old) {
            result += rest[..<range.lowerBound]
            result += new
            rest = rest[range.upperBound...]
        }
        return result + rest
    }

    func containsText(_ other: String) -> Bool { self[...].rangeOfText(other) != nil }
}

extension Substring {
    /// The first range holding `text`, compared character by character.
    func rangeOfText(_ text: String) -> Range<Index>? {
        guard let first = text.first else { return nil }
        var index = startIndex
        while let found = self[index...].firstIndex(of: first) {
            if self[found...].starts(with: text) { return found..<self.index(found, offsetBy: text.count) }
            index = self.index(after: found)
        }
        return nil
    }
}
