import Formulas
import JSON
import SOQL

/// One entry of a transform's `lookups` (SPEC §3c): `field` takes the id of the `sobjectType`
/// record whose `match` fields equal the formulas' values over the record (and that meets
/// `where`); `otherwise` says what a key no org record matches gets.
struct LookupRule: Sendable {
    /// What a record whose key matches nothing gets.
    enum Otherwise: Sendable {
        /// The record is rejected, naming the lookup and its key (the default).
        case reject
        case null
        /// The field keeps the value it has.
        case keep
        /// A `:VAR` bind's value.
        case value(String)
        case formula(Formula)
    }

    let index: Int
    let field: String
    let sobjectType: String
    /// Org field → the formula giving its value, in the order written.
    let match: [(field: String, formula: Formula)]
    let condition: SOQLCondition?
    let otherwise: Otherwise

    /// `lookups[i] (Field)`, as reasons name the lookup.
    var name: String { "lookups[\(index)] (\(field))" }

    /// The rules of `settings`' `lookups`, each problem reported with its path.
    static func rules(_ settings: StageSettings, fieldTypes: [String: FormulaType]) -> [LookupRule] {
        guard let value = settings.value("lookups") else { return [] }
        guard let array = value.arrayValue else {
            settings.report("lookups", "must be an array of {\"field\", \"sobjectType\", \"match\", \"where\", \"otherwise\"}")
            return []
        }
        return array.enumerated().compactMap { index, element in rule(element, index: index, settings, fieldTypes: fieldTypes) }
    }

    private static func rule(_ element: JSONValue, index: Int, _ settings: StageSettings, fieldTypes: [String: FormulaType]) -> LookupRule? {
        let path = "lookups[\(index)]"
        guard let object = element.objectValue else {
            settings.report(path, "must be {\"field\", \"sobjectType\", \"match\", \"where\", \"otherwise\"}")
            return nil
        }
        for key in object.keys where !["field", "sobjectType", "match", "where", "otherwise"].contains(key) {
            settings.report("\(path).\(key)", "unknown key; expected field, sobjectType, match, where or otherwise")
        }
        var valid = true
        func name(_ key: String, _ what: String) -> String? {
            guard let text = object[key]?.stringValue, !text.isEmpty else {
                settings.report("\(path).\(key)", "is required: \(what)")
                valid = false
                return nil
            }
            guard (try? SOQLFieldPath(text)) != nil, !text.contains(".") else {
                settings.report("\(path).\(key)", "\"\(text)\" is not a field or object name")
                valid = false
                return nil
            }
            return text
        }
        let field = name("field", "the field that takes the id found")
        let sobjectType = name("sobjectType", "the object looked up (RecordType, User, Account…)")
        var match: [(field: String, formula: Formula)] = []
        if let pairs = object["match"]?.objectValue, !pairs.isEmpty {
            for (orgField, value) in pairs {
                guard (try? SOQLFieldPath(orgField)) != nil else {
                    settings.report("\(path).match.\(orgField)", "is not a field name")
                    valid = false
                    continue
                }
                guard let text = value.stringValue else {
                    settings.report("\(path).match.\(orgField)", "must be a formula over the record (text constants in quotes: \"'Contact'\")")
                    valid = false
                    continue
                }
                guard let formula = TransformStage.formula(text, at: "\(path).match.\(orgField)", settings, fieldTypes: fieldTypes) else {
                    valid = false
                    continue
                }
                match.append((orgField, formula))
            }
        } else {
            settings.report("\(path).match", "is required: an object of org field → formula over the record, {\"Email\": \"OwnerEmail\"}")
            valid = false
        }
        let condition = whereCondition(object["where"], path: "\(path).where", settings, valid: &valid)
        let otherwise = self.otherwise(object["otherwise"], path: "\(path).otherwise", settings, fieldTypes: fieldTypes, valid: &valid)
        guard valid, let field, let sobjectType, let otherwise else { return nil }
        return LookupRule(index: index, field: field, sobjectType: sobjectType, match: match, condition: condition, otherwise: otherwise)
    }

    private static func whereCondition(_ value: JSONValue?, path: String, _ settings: StageSettings, valid: inout Bool) -> SOQLCondition? {
        guard let value else { return nil }
        guard let text = value.stringValue else {
            settings.report(path, "must be a SOQL condition, \"IsActive = true\"")
            valid = false
            return nil
        }
        let bound = SOQLBinding.bind(text, values: settings.variables)
        for name in bound.unset { settings.report(path, "bind :\(name) has no value (use --var \(name)=…, --var-file, or the environment)") }
        do throws(SOQLError) {
            return try SOQL.parseCondition(bound.text)
        } catch {
            settings.report(path, "\(error.errorCode.rawValue) at row \(error.row), column \(error.column): \(error.detail)")
            valid = false
            return nil
        }
    }

    private static func otherwise(_ value: JSONValue?, path: String, _ settings: StageSettings, fieldTypes: [String: FormulaType],
                                  valid: inout Bool) -> Otherwise? {
        guard let value else { return .reject }
        guard let text = value.stringValue else {
            settings.report(path, "must be reject, null, keep, a :VAR bind or a formula")
            valid = false
            return nil
        }
        switch text {
        case "reject": return .reject
        case "null": return .null
        case "keep": return .keep
        default: break
        }
        if text.hasPrefix(":") {
            let variable = String(text.dropFirst())
            guard let bound = settings.variables[variable] else {
                settings.report(path, "bind :\(variable) has no value (use --var \(variable)=…, --var-file, or the environment)")
                valid = false
                return nil
            }
            return .value(bound)
        }
        guard let formula = TransformStage.formula(text, at: path, settings, fieldTypes: fieldTypes) else {
            valid = false
            return nil
        }
        return .formula(formula)
    }
}
