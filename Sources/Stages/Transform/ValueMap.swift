import Formats
import Formulas
import Foundation
import JSON

/// One field's `map` in a `transform`: a table of values (inline, or two columns of a CSV file)
/// whose keys are the field's values as text — or regular expressions tried in order, whose
/// values may use `$1`… — and what to do with a value the table does not hold.
struct ValueMap: @unchecked Sendable {
    enum Otherwise: Sendable {
        case keep, null, reject
        case formula(Formula)
    }

    enum Outcome {
        case unchanged
        case value(JSONValue)
        case rejected(String)
    }

    let field: String
    private let exact: [String: JSONValue]
    /// Patterns compiled to match a whole value, in the order written.
    private let patterns: [(NSRegularExpression, JSONValue)]
    let otherwise: Otherwise

    /// Reads `map.<field>` from the stage's settings, reporting problems at their path; `nil` when
    /// the map cannot be used.
    init?(field: String, settings value: JSONValue, stage: StageSettings) {
        let path = "map.\(field)"
        guard let object = value.objectValue else {
            stage.report(path, "must be an object with \"values\" or \"file\", \"key\" and \"value\"")
            return nil
        }
        for key in object.keys where !["values", "file", "key", "value", "regex", "otherwise"].contains(key) {
            stage.report("\(path).\(key)", "unknown key; expected values, file, key, value, regex, otherwise")
        }
        self.field = field
        var table: [(String, JSONValue)] = []
        if let values = object["values"] {
            guard let inline = values.objectValue else {
                stage.report("\(path).values", "must be an object of value → replacement")
                return nil
            }
            if object["file"] != nil { stage.report(path, "has both \"values\" and \"file\"; give one") }
            table = inline.map { ($0.key, $0.value) }
        } else if let file = object["file"] {
            guard let name = file.stringValue else {
                stage.report("\(path).file", "must be a path string")
                return nil
            }
            guard let loaded = Self.load(PathResolver.absolute(name, relativeTo: stage.baseDirectory), object, path: path, stage: stage) else { return nil }
            table = loaded
        } else {
            stage.report(path, "needs \"values\" (an inline table) or \"file\" (a CSV file with \"key\" and \"value\" columns)")
            return nil
        }
        let regex = object["regex"]
        if let regex, regex.boolValue == nil { stage.report("\(path).regex", "must be true or false") }
        if regex?.boolValue == true {
            var patterns: [(NSRegularExpression, JSONValue)] = []
            for (key, replacement) in table {
                do {
                    patterns.append((try NSRegularExpression(pattern: "(?:" + key + ")\\z", options: []), replacement))
                } catch {
                    stage.report(path, "\(quotedKey(key)) is not a regular expression")
                }
            }
            self.patterns = patterns
            exact = [:]
        } else {
            patterns = []
            exact = Dictionary(table, uniquingKeysWith: { first, _ in first })
        }
        switch object["otherwise"] {
        case nil: otherwise = .keep
        case .string("keep")?: otherwise = .keep
        case .string("null")?: otherwise = .null
        case .string("reject")?: otherwise = .reject
        case .string(let text)?:
            do throws(FormulaSyntaxError) {
                otherwise = .formula(try Formula(text))
            } catch {
                stage.report("\(path).otherwise", "\(error) (otherwise is keep, null, reject or a formula)")
                return nil
            }
        case let other?:
            stage.report("\(path).otherwise", "must be \"keep\", \"null\", \"reject\" or a formula, not \(other.kindName)")
            return nil
        }
    }

    /// The table of a CSV file's `key` and `value` columns; an empty value cell is `null`.
    private static func load(_ file: String, _ object: JSONObject, path: String, stage: StageSettings) -> [(String, JSONValue)]? {
        guard let keyColumn = object["key"]?.stringValue, let valueColumn = object["value"]?.stringValue else {
            stage.report(path, "a map from a file needs \"key\" and \"value\": the names of its two columns")
            return nil
        }
        let reader: CSVReader
        do { reader = try CSVReader(path: file) } catch {
            stage.report("\(path).file", "\(file): \(error.description)")
            return nil
        }
        var rows = reader.makeIterator()
        guard case .fields(let header, _)? = rows.next() else {
            stage.report("\(path).file", "\(file): the file is empty or its header row cannot be read")
            return nil
        }
        guard let keyAt = header.firstIndex(of: keyColumn), let valueAt = header.firstIndex(of: valueColumn) else {
            let missing = header.contains(keyColumn) ? valueColumn : keyColumn
            stage.report(path, "\(file): no column \"\(missing)\" (columns: \(header.joined(separator: ", ")))")
            return nil
        }
        var table: [(String, JSONValue)] = []
        var seen: [String: Int] = [:]
        while let row = rows.next() {
            switch row {
            case .malformed(let reason, let line, _):
                stage.report("\(path).file", "\(file): line \(line): \(reason)")
                return nil
            case .fields(let values, let line):
                if values.count == 1 && values[0].isEmpty { continue }
                guard values.count == header.count else {
                    stage.report("\(path).file", "\(file): line \(line): expected \(header.count) columns, found \(values.count)")
                    return nil
                }
                if let earlier = seen[values[keyAt]] {
                    stage.report("\(path).file", "\(file): line \(line): the key \(quotedKey(values[keyAt])) repeats line \(earlier)")
                    return nil
                }
                seen[values[keyAt]] = line
                table.append((values[keyAt], values[valueAt].isEmpty ? .null : .string(values[valueAt])))
            }
        }
        if let problem = rows.readError {
            stage.report("\(path).file", "\(file): \(problem)")
            return nil
        }
        return table
    }

    /// What the map makes of `value` (absent or `null` is looked up as empty text); an `otherwise`
    /// formula is evaluated in `environment`.
    func apply(to value: JSONValue?, in environment: FormulaEnvironment) -> Outcome {
        let key: String
        switch value {
        case nil, .null?: key = ""
        case .string(let text)?: key = text
        case .integer(let number)?: key = String(number)
        case .double(let number)?: key = number.rounded() == number && abs(number) < 1e15 ? String(Int64(number)) : String(number)
        case .bool(let flag)?: key = flag ? "true" : "false"
        case let other?: return .rejected("map.\(field): \(other.kindName) cannot be looked up in a map")
        }
        if patterns.isEmpty {
            if let replacement = exact[key] { return .value(replacement) }
        } else {
            let range = NSRange(key.startIndex..., in: key)
            for (pattern, replacement) in patterns {
                guard let match = pattern.firstMatch(in: key, options: [.anchored], range: range) else { continue }
                guard case .string(let template) = replacement else { return .value(replacement) }
                return .value(.string(pattern.replacementString(for: match, in: key, offset: 0, template: template)))
            }
        }
        switch otherwise {
        case .keep: return .unchanged
        case .null: return .value(.null)
        case .reject: return .rejected("map.\(field): \(quotedKey(key)) is not in the map")
        case .formula(let formula):
            do throws(FormulaEvaluationError) {
                return .value(try formula.evaluate(in: environment).json)
            } catch {
                return .rejected("map.\(field).otherwise: \(error.message)")
            }
        }
    }
}

/// `"text"` for messages about map keys, cut at 60 characters.
func quotedKey(_ text: String) -> String {
    text.count > 60 ? "\"\(text.prefix(57))…\"" : "\"\(text)\""
}
