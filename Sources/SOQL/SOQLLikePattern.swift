/// A LIKE pattern: `%` matches any run of characters, `_` exactly one, a backslash makes the next
/// character literal. Matching ignores case, as in Salesforce.
///
/// An ASCII pattern over ASCII text (the usual case: names, codes, external ids) is matched over
/// their UTF-8 bytes, without making an array of characters of each record's value; other text
/// is matched character by character.
struct SOQLLikePattern {
    private enum Element: Equatable {
        case character(Character)
        case anyOne
        case anyRun
    }

    private let pattern: String
    /// `_` and `%` among a byte pattern's elements, beyond every byte.
    private static let anyOne: UInt16 = 0x100
    private static let anyRun: UInt16 = 0x101

    init(_ pattern: String) {
        self.pattern = pattern
    }

    /// Whether the whole of `text` matches.
    func matches(_ text: String) -> Bool {
        if let result = matchesAsBytes(text) { return result }
        let elements = Self.compile(Array(pattern.lowercased()), special: ("\\", "%", "_"), anyOne: Element.anyOne, anyRun: Element.anyRun,
                                    literal: Element.character)
        return Self.matches(elements, Array(text.lowercased()), isRun: { $0 == .anyRun }) { element, character in
            element == .anyOne || element == .character(character)
        }
    }

    /// The answer over bytes, or `nil` when the pattern or the text is not ASCII, or the text
    /// holds a carriage return (with a following line feed, one character, which `_` takes whole).
    private func matchesAsBytes(_ text: String) -> Bool? {
        guard pattern.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        var text = text
        return text.withUTF8 { utf8 in
            guard utf8.allSatisfy({ $0 < 0x80 && $0 != 0x0D }) else { return nil }
            let elements = Self.compile(Array(pattern.utf8), special: (UInt8(ascii: "\\"), UInt8(ascii: "%"), UInt8(ascii: "_")),
                                        anyOne: Self.anyOne, anyRun: Self.anyRun) { UInt16(Self.lowercased($0)) }
            return Self.matches(elements, utf8, isRun: { $0 == Self.anyRun }) { element, byte in
                element == Self.anyOne || element == UInt16(Self.lowercased(byte))
            }
        }
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
    }

    /// The pattern's elements: wildcards, and literals (escaped by a backslash or plain), from its
    /// units (characters or bytes) and how the backslash, `%` and `_` are spelled in them.
    private static func compile<Unit: Equatable, Piece>(
        _ units: [Unit], special: (backslash: Unit, percent: Unit, underscore: Unit), anyOne: Piece, anyRun: Piece,
        literal: (Unit) -> Piece
    ) -> [Piece] {
        var elements: [Piece] = []
        elements.reserveCapacity(units.count)
        var escaping = false
        for unit in units {
            if escaping {
                elements.append(literal(unit))
                escaping = false
            } else if unit == special.backslash {
                escaping = true
            } else if unit == special.percent {
                elements.append(anyRun)
            } else if unit == special.underscore {
                elements.append(anyOne)
            } else {
                elements.append(literal(unit))
            }
        }
        if escaping { elements.append(literal(special.backslash)) }
        return elements
    }

    /// Whether the whole of `text` matches `pattern`, backtracking to the latest `%` on a mismatch.
    private static func matches<Pattern: RandomAccessCollection<Piece>, Text: RandomAccessCollection, Piece>(
        _ pattern: Pattern, _ text: Text, isRun: (Piece) -> Bool, matchesOne: (Piece, Text.Element) -> Bool
    ) -> Bool where Pattern.Index == Int, Text.Index == Int {
        var textIndex = text.startIndex
        var patternIndex = pattern.startIndex
        var lastRun: (pattern: Int, text: Int)?
        while textIndex < text.endIndex {
            if patternIndex < pattern.endIndex, isRun(pattern[patternIndex]) {
                lastRun = (patternIndex, textIndex)
                patternIndex += 1
            } else if patternIndex < pattern.endIndex, matchesOne(pattern[patternIndex], text[textIndex]) {
                patternIndex += 1
                textIndex += 1
            } else if let run = lastRun {
                lastRun = (run.pattern, run.text + 1)
                patternIndex = run.pattern + 1
                textIndex = run.text + 1
            } else {
                return false
            }
        }
        return pattern[patternIndex...].allSatisfy(isRun)
    }
}
