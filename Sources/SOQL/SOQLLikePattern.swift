/// A LIKE pattern: `%` matches any run of characters, `_` exactly one, a backslash makes the next
/// character literal. Matching ignores case, as in Salesforce.
struct SOQLLikePattern {
    private enum Element: Equatable {
        case character(Character)
        case anyOne
        case anyRun
    }

    private let elements: [Element]

    init(_ pattern: String) {
        var elements: [Element] = []
        var escaping = false
        for character in pattern.lowercased() {
            if escaping {
                elements.append(.character(character))
                escaping = false
                continue
            }
            switch character {
            case "\\": escaping = true
            case "%": elements.append(.anyRun)
            case "_": elements.append(.anyOne)
            default: elements.append(.character(character))
            }
        }
        if escaping { elements.append(.character("\\")) }
        self.elements = elements
    }

    /// Whether the whole of `text` matches, backtracking to the latest `%` on a mismatch.
    func matches(_ text: String) -> Bool {
        let characters = Array(text.lowercased())
        var textIndex = 0
        var patternIndex = 0
        var lastRun: (pattern: Int, text: Int)?
        while textIndex < characters.count {
            if patternIndex < elements.count, elements[patternIndex] == .anyRun {
                lastRun = (patternIndex, textIndex)
                patternIndex += 1
            } else if patternIndex < elements.count,
                elements[patternIndex] == .anyOne || elements[patternIndex] == .character(characters[textIndex])
            {
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
        return elements[patternIndex...].allSatisfy { $0 == .anyRun }
    }
}
