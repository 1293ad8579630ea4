import Foundation
import Formats
import JSON

/// Checks and converts the field values of a create or update against the schema, as an org does:
/// unknown fields, read-only fields, required fields, lengths, types and picklist values.
struct RecordValidator {
    let schema: OrgSchema

    /// The values to store for `input` on `object`, converted to their stored JSON form.
    /// - Parameter isCreate: required fields are checked and defaults applied only on create.
    func validate(_ input: JSONObject, object: ObjectSchema, isCreate: Bool, lookupExists: (String) -> Bool) throws(APIError) -> JSONObject {
        var output = JSONObject()
        for (name, value) in input {
            if name == "attributes" { continue }
            guard let field = object.field(name) else {
                throw APIError.invalidField("No such column '\(name)' on sobject of type \(object.name)", fields: [name])
            }
            if field.name == "Id" {
                throw APIError.invalidField("The Id field should not be specified in the sobject data.", fields: ["Id"])
            }
            if isCreate ? !field.createable : !field.updateable {
                throw APIError(400, "INVALID_FIELD_FOR_INSERT_UPDATE",
                               "Unable to create/update fields: \(field.name). Please check the security settings of this field and verify that it is read/write for your profile or permission set.",
                               fields: [field.name])
            }
            output[field.name] = try convert(value, field: field, object: object, lookupExists: lookupExists)
        }
        if isCreate {
            for (name, value) in object.defaultsOnCreate where output[name] == nil { output[name] = value }
            let missing = object.requiredOnCreate.filter { (output[$0] ?? .null).isNull }
            if !missing.isEmpty {
                throw APIError(400, "REQUIRED_FIELD_MISSING", "Required fields are missing: [\(missing.joined(separator: ", "))]", fields: missing)
            }
        } else {
            let cleared = object.fields.filter { !$0.nillable && $0.updateable && (output[$0.name]?.isNull ?? false) }.map(\.name)
            if !cleared.isEmpty {
                throw APIError(400, "REQUIRED_FIELD_MISSING", "Required fields are missing: [\(cleared.joined(separator: ", "))]", fields: cleared)
            }
        }
        return output
    }

    /// Whether `text` is `local@domain.tld`: one `@` with something before it, and a `.` in the
    /// domain with something on both sides, no white space anywhere — the pattern
    /// `^[^@\s]+@[^@\s]+\.[^@\s]+$`, read without compiling it (a load checks every row's
    /// email), and without the pattern's `$` letting one line break end the address.
    static func isEmailAddress(_ text: String) -> Bool {
        var seenAt = false
        var localCount = 0
        var domainCount = 0
        // A `.` stood in the domain after its first scalar, and a scalar came after such a `.`.
        var dotAfterFirst = false
        var scalarAfterDot = false
        for scalar in text.unicodeScalars {
            if scalar.properties.isWhitespace { return false }
            if scalar == "@" {
                guard !seenAt, localCount > 0 else { return false }
                seenAt = true
                continue
            }
            guard seenAt else {
                localCount += 1
                continue
            }
            if dotAfterFirst { scalarAfterDot = true }
            if scalar == "." && domainCount > 0 { dotAfterFirst = true }
            domainCount += 1
        }
        return scalarAfterDot
    }

    /// Converts one value to its stored form (Salesforce coerces numeric strings, accepts ISO dates).
    func convert(_ value: JSONValue, field: FieldSchema, object: ObjectSchema, lookupExists: (String) -> Bool) throws(APIError) -> JSONValue {
        if value.isNull { return .null }
        func bad(_ what: String) -> APIError {
            APIError(400, "INVALID_TYPE_ON_FIELD_IN_RECORD", "\(field.label): value not of required type: \(what)", fields: [field.name])
        }
        switch field.type {
        case .string, .textarea, .email, .phone, .url, .picklist, .multipicklist:
            let text: String
            switch value {
            case .string(let string): text = string
            case .integer(let number): text = String(number)
            case .double(let number): text = "\(number)"
            case .bool(let bool): text = bool ? "true" : "false"
            default: throw bad(value.jsonString)
            }
            // Bytes first: no more bytes than the length, no more characters either.
            if text.utf8.count > field.length && text.count > field.length {
                throw APIError(400, "STRING_TOO_LONG", "\(field.label): data value too large: \(text.prefix(40)) (max length=\(field.length))", fields: [field.name])
            }
            if field.type == .email, !text.isEmpty, !Self.isEmailAddress(text) {
                throw APIError(400, "INVALID_EMAIL_ADDRESS", "\(field.label): invalid email address: \(text)", fields: [field.name])
            }
            if field.type == .picklist, field.restrictedPicklist, !field.picklistValues.contains(text) {
                throw APIError(400, "INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST", "\(field.label): bad value for restricted picklist field: \(text)", fields: [field.name])
            }
            if field.type == .multipicklist, field.restrictedPicklist {
                for item in text.split(separator: ";") where !field.picklistValues.contains(String(item)) {
                    throw APIError(400, "INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST", "\(field.label): bad value for restricted picklist field: \(item)", fields: [field.name])
                }
            }
            return .string(text)
        case .boolean:
            if let bool = value.boolValue { return .bool(bool) }
            if let text = value.stringValue?.lowercased(), text == "true" || text == "false" { return .bool(text == "true") }
            throw bad(value.jsonString)
        case .int:
            if let number = value.integerValue { return .integer(number) }
            if let text = value.stringValue, let number = Int64(text) ?? Int64(text.trimmingCharacters(in: .whitespaces)) { return .integer(number) }
            throw bad(value.jsonString)
        case .double, .currency, .percent:
            if let number = value.doubleValue { return .double(number) }
            if let text = value.stringValue, let number = Double(text) ?? Double(text.trimmingCharacters(in: .whitespaces)) { return .double(number) }
            throw bad(value.jsonString)
        case .date:
            guard let text = value.stringValue, let milliseconds = SalesforceTime.parse(text) else { throw bad(value.jsonString) }
            return .string(SalesforceTime.formatDate(milliseconds))
        case .datetime:
            guard let text = value.stringValue, let milliseconds = SalesforceTime.parse(text) else { throw bad(value.jsonString) }
            return .string(SalesforceTime.format(milliseconds))
        case .reference, .id:
            guard let text = value.stringValue else { throw bad(value.jsonString) }
            if text.isEmpty { return .null }
            guard let id = SalesforceId.normalize(text) else { throw APIError.malformedId(field.label, text, field: field.name) }
            let prefixes = field.referenceTargets.compactMap { schema.object($0)?.keyPrefix }
            if !prefixes.isEmpty, !prefixes.contains(SalesforceId.prefix(of: id)) || !lookupExists(id) {
                throw APIError(400, "INVALID_CROSS_REFERENCE_KEY", "invalid cross reference id", fields: [field.name])
            }
            return .string(id)
        }
    }
}
