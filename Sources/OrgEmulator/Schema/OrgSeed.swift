import Foundation
import Formats
import JSON

/// A problem in a seed file, located by JSON path (or line and column for syntax errors).
public struct SeedError: Error, Sendable, CustomStringConvertible {
    public var file: String
    public var location: String
    public var message: String

    public var description: String { location.isEmpty ? "\(file): \(message)" : "\(file): \(location): \(message)" }
}

/// A user the OAuth flows authenticate against.
public struct OrgUser: Sendable {
    public var username: String
    public var password: String
    /// The user's security token: a password login must present password + token exactly, as a
    /// real org requires from outside trusted IP ranges. `nil`: the password alone.
    public var securityToken: String?
    public var clientId: String
    public var clientSecret: String?
    public var refreshToken: String?
    /// PEM certificate whose key signs JWT bearer assertions for this user.
    public var jwtCertificate: String?
}

/// A record of the seed, before ids are assigned. Field values may be `{"$ref": "key"}`.
public struct SeedRecord: Sendable {
    public var key: String?
    public var type: String
    public var fields: JSONObject
}

/// The content of a seed file: schema, org settings, users and records (docs/seed-format.md).
public struct OrgSeed: Sendable {
    public var orgName: String
    public var isSandbox: Bool
    public var schema: OrgSchema
    public var users: [OrgUser]
    public var records: [SeedRecord]
    /// A stable digest of the seed text; the database is reseeded when it changes.
    public var digest: String

    /// Loads and checks a seed file.
    public static func load(path: String) throws(SeedError) -> OrgSeed {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SeedError(file: path, location: "", message: "cannot read the seed file")
        }
        let value: JSONValue
        do {
            value = try JSONParser.parse(data).value
        } catch {
            throw SeedError(file: path, location: "line \(error.line), column \(error.column)", message: error.message)
        }
        return try decode(value, file: path, digest: Self.digest(data))
    }

    /// Decodes a seed document.
    public static func decode(_ value: JSONValue, file: String, digest: String = "") throws(SeedError) -> OrgSeed {
        var decoder = SeedDecoder(file: file)
        guard let root = value.objectValue else { throw SeedError(file: file, location: "", message: "the seed must be a JSON object") }
        let seed = decoder.decode(root, digest: digest)
        if let first = decoder.errors.first { throw first }
        return seed!
    }

    static func digest(_ data: Data) -> String {
        // FNV-1a 64: enough to notice a changed file; not a security hash.
        var hash: UInt64 = 0xcbf29ce484222325
        for byte in data { hash = (hash ^ UInt64(byte)) &* 0x100000001b3 }
        return String(hash, radix: 16)
    }
}

/// Reads a seed document, collecting located errors.
private struct SeedDecoder {
    let file: String
    var errors: [SeedError] = []
    var recordTypeCount = 0

    init(file: String) {
        self.file = file
    }

    mutating func fail(_ location: String, _ message: String) {
        errors.append(SeedError(file: file, location: location, message: message))
    }

    mutating func decode(_ root: JSONObject, digest: String) -> OrgSeed? {
        for key in root.keys where !["org", "users", "objects", "records"].contains(key) {
            fail(key, "unknown key; expected org, users, objects or records")
        }
        let org = root["org"]?.objectValue ?? JSONObject()
        let orgName = org["name"]?.stringValue ?? "Emulated Org"
        var isSandbox = true
        if let value = org["isSandbox"] {
            if let bool = value.boolValue { isSandbox = bool } else { fail("org.isSandbox", "must be a boolean") }
        }
        let users = decodeUsers(root["users"])
        var objects = builtInObjects()
        // Standard fields refer only to the objects the seed has (Task.WhatId → Case when it has Case).
        let names = Set(objects.map { $0.name.lowercased() } + (root["objects"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue?.lowercased() })
        for (offset, value) in (root["objects"]?.arrayValue ?? []).enumerated() {
            if var object = decodeObject(value, path: "objects[\(offset)]", objectNames: names) {
                for index in object.recordTypes.indices {
                    recordTypeCount += 1
                    object.recordTypes[index].id = SalesforceId.make(prefix: ObjectSchema.recordTypePrefix, counter: Int64(recordTypeCount))
                }
                if objects.contains(where: { $0.name.lowercased() == object.name.lowercased() }) {
                    fail("objects[\(offset)].name", "object \(object.name) is declared twice")
                } else if objects.contains(where: { $0.keyPrefix == object.keyPrefix }) {
                    fail("objects[\(offset)].keyPrefix", "key prefix \(object.keyPrefix) is already used")
                } else {
                    objects.append(object)
                }
            }
        }
        if root["objects"] != nil && root["objects"]?.arrayValue == nil { fail("objects", "must be an array") }
        let schema = OrgSchema(objects: objects)
        for object in objects {
            for field in object.fields where field.type == .reference {
                for target in field.referenceTargets where schema.object(target) == nil {
                    fail("objects.\(object.name).fields.\(field.name).referenceTo", "no object named \(target)")
                }
            }
        }
        let records = decodeRecords(root["records"], schema: schema)
        guard errors.isEmpty else { return nil }
        return OrgSeed(orgName: orgName, isSandbox: isSandbox, schema: schema, users: users, records: records, digest: digest)
    }

    mutating func decodeUsers(_ value: JSONValue?) -> [OrgUser] {
        guard let value else { return [] }
        guard let array = value.arrayValue else { fail("users", "must be an array"); return [] }
        var users: [OrgUser] = []
        for (offset, element) in array.enumerated() {
            let path = "users[\(offset)]"
            guard let user = element.objectValue else { fail(path, "must be an object"); continue }
            for key in user.keys where !["username", "password", "securityToken", "clientId", "clientSecret", "refreshToken", "jwtCertificate"].contains(key) {
                fail("\(path).\(key)", "unknown key")
            }
            guard let username = user["username"]?.stringValue, let password = user["password"]?.stringValue,
                  let clientId = user["clientId"]?.stringValue else {
                fail(path, "username, password and clientId are required strings")
                continue
            }
            if user["securityToken"] != nil && user["securityToken"]?.stringValue == nil { fail("\(path).securityToken", "must be a string") }
            users.append(OrgUser(username: username, password: password, securityToken: user["securityToken"]?.stringValue, clientId: clientId,
                                 clientSecret: user["clientSecret"]?.stringValue, refreshToken: user["refreshToken"]?.stringValue,
                                 jwtCertificate: user["jwtCertificate"]?.stringValue))
        }
        return users
    }

    static let fieldKeys: Set<String> = [
        "name", "label", "type", "length", "precision", "scale", "required", "unique", "externalId", "idLookup", "createable",
        "updateable", "picklistValues", "restrictedPicklist", "referenceTo", "relationshipName", "childRelationshipName",
        "relationship", "cascadeDelete", "restrictedDelete", "default", "standard", "compound",
    ]

    mutating func decodeObject(_ value: JSONValue, path: String, objectNames: Set<String>) -> ObjectSchema? {
        guard let object = value.objectValue else { fail(path, "must be an object"); return nil }
        for key in object.keys where !["name", "label", "labelPlural", "keyPrefix", "fields", "standard", "recordTypes"].contains(key) {
            fail("\(path).\(key)", "unknown key; expected name, label, labelPlural, keyPrefix, fields, standard or recordTypes")
        }
        guard let name = object["name"]?.stringValue, name.range(of: #"^[A-Za-z][A-Za-z0-9_]*$"#, options: .regularExpression) != nil else {
            fail("\(path).name", "is required: letters, digits and underscores")
            return nil
        }
        guard let prefix = object["keyPrefix"]?.stringValue, prefix.count == 3, prefix.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            fail("\(path).keyPrefix", "is required: 3 letters or digits, e.g. \"001\"")
            return nil
        }
        let custom = name.hasSuffix("__c")
        var fields = Self.systemFields()
        for (offset, element) in (object["fields"]?.arrayValue ?? []).enumerated() {
            guard let field = decodeField(element, path: "\(path).fields[\(offset)]", objectName: name) else { continue }
            if fields.contains(where: { $0.name.lowercased() == field.name.lowercased() }) {
                fail("\(path).fields[\(offset)].name", "field \(field.name) is declared twice (system fields are added for you)")
                continue
            }
            fields.append(field)
        }
        if let standard = object["standard"] {
            if standard.boolValue == nil { fail("\(path).standard", "must be a boolean") }
            if standard.boolValue == true {
                if StandardFields.fields(of: name).isEmpty {
                    fail("\(path).standard", "no standard fields are known for \(name); standard objects: Account, Contact, Opportunity, Case, Task")
                }
                for var definition in StandardFields.fields(of: name) {
                    guard let fieldName = definition["name"]?.stringValue, !fields.contains(where: { $0.name.lowercased() == fieldName.lowercased() }) else { continue }
                    if let targets = definition["referenceTo"] {
                        let known = (targets.stringValue.map { [$0] } ?? targets.arrayValue?.compactMap(\.stringValue) ?? [])
                            .filter { objectNames.contains($0.lowercased()) }
                        if known.isEmpty { continue }
                        definition["referenceTo"] = .array(known.map(JSONValue.string))
                    }
                    if let field = decodeField(.object(definition), path: "\(path).standard(\(fieldName))", objectName: name) { fields.append(field) }
                }
            }
        }
        // Every record has an owner, except the details of a master-detail (their master's owns them).
        if !fields.contains(where: { $0.masterDetail || $0.name.lowercased() == "ownerid" }) {
            fields.append(Self.ownerField())
        }
        var recordTypes: [RecordTypeInfo] = []
        if let value = object["recordTypes"] {
            for (offset, element) in (value.arrayValue ?? []).enumerated() {
                let developerName = element.stringValue ?? element["developerName"]?.stringValue
                guard let developerName, developerName.range(of: #"^[A-Za-z][A-Za-z0-9_]*$"#, options: .regularExpression) != nil else {
                    fail("\(path).recordTypes[\(offset)]", "must be a developer name, or an object with developerName and name")
                    continue
                }
                recordTypes.append(RecordTypeInfo(id: "", developerName: developerName, name: element["name"]?.stringValue ?? developerName))
            }
            if value.arrayValue == nil { fail("\(path).recordTypes", "must be an array") }
            if !recordTypes.isEmpty { fields.append(Self.recordTypeField()) }
        }
        var schema = ObjectSchema(name: name, label: object["label"]?.stringValue ?? name, labelPlural: object["labelPlural"]?.stringValue ?? name + "s",
                                  keyPrefix: prefix, custom: custom, fields: fields)
        schema.recordTypes = recordTypes
        return schema
    }

    mutating func decodeField(_ value: JSONValue, path: String, objectName: String) -> FieldSchema? {
        guard let (field, name, type) = fieldHeader(value, path: path, objectName: objectName) else { return nil }
        func bool(_ key: String, _ defaultValue: Bool) -> Bool {
            guard let value = field[key] else { return defaultValue }
            guard let bool = value.boolValue else { fail("\(path).\(key)", "must be a boolean"); return defaultValue }
            return bool
        }
        let relationship = field["relationship"]?.stringValue ?? "lookup"
        if type == .reference && !["lookup", "masterDetail"].contains(relationship) {
            fail("\(path).relationship", "must be \"lookup\" or \"masterDetail\"")
        }
        let masterDetail = type == .reference && relationship == "masterDetail"
        // A polymorphic lookup names several objects.
        let targets = field["referenceTo"]?.stringValue.map { [$0] } ?? field["referenceTo"]?.arrayValue?.compactMap(\.stringValue) ?? []
        if type == .reference && targets.isEmpty {
            fail("\(path).referenceTo", "is required for a reference: an object name, or an array of them for a polymorphic lookup")
        }
        let externalId = bool("externalId", false)
        let required = bool("required", masterDetail)
        var picklistValues: [String] = []
        if let values = field["picklistValues"] {
            if let array = values.arrayValue, array.allSatisfy({ $0.stringValue != nil }) {
                picklistValues = array.compactMap(\.stringValue)
            } else {
                fail("\(path).picklistValues", "must be an array of strings")
            }
        }
        var schema = FieldSchema(
            name: name, label: field["label"]?.stringValue ?? name, type: type,
            length: Int(field["length"]?.integerValue ?? Int64(Self.defaultLength(of: type))),
            precision: Int(field["precision"]?.integerValue ?? (type == .double || type == .currency || type == .percent ? 18 : 0)),
            scale: Int(field["scale"]?.integerValue ?? (type == .double || type == .currency || type == .percent ? 2 : 0)),
            nillable: !required && type != .boolean, createable: bool("createable", true), updateable: bool("updateable", !masterDetail || true),
            unique: bool("unique", false) || externalId && bool("unique", false), externalId: externalId,
            idLookup: bool("idLookup", externalId), defaultedOnCreate: type == .boolean || field["default"] != nil,
            defaultValue: field["default"] ?? (type == .boolean ? .bool(false) : nil), picklistValues: picklistValues,
            restrictedPicklist: bool("restrictedPicklist", false), referenceTo: targets.first,
            relationshipName: type == .reference
                ? (field["relationshipName"]?.stringValue ?? (name.hasSuffix("Id") ? String(name.dropLast(2)) : name.hasSuffix("__c") ? String(name.dropLast(3)) + "__r" : name))
                : nil,
            childRelationshipName: field["childRelationshipName"]?.stringValue, masterDetail: masterDetail,
            cascadeDelete: masterDetail || bool("cascadeDelete", false), restrictedDelete: bool("restrictedDelete", false),
            custom: name.hasSuffix("__c"))
        schema.referenceTargets = type == .reference ? targets : []
        if let compound = field["compound"] {
            guard let parts = compound.arrayValue?.compactMap(\.stringValue), !parts.isEmpty, type.isText else {
                fail("\(path).compound", "must be an array of the text fields this field joins, on a text field")
                return nil
            }
            // Set by the org from its parts (Contact.Name from FirstName and LastName).
            schema.compound = parts
            schema.createable = false
            schema.updateable = false
            schema.nillable = true
        }
        return schema
    }

    /// A field's definition with a `standard` field's catalog entry merged in, its name, sizes
    /// and type checked: what every field needs before the rest of it is read.
    mutating func fieldHeader(_ value: JSONValue, path: String, objectName: String) -> (JSONObject, String, FieldType)? {
        guard var field = value.objectValue else { fail(path, "must be an object"); return nil }
        for key in field.keys where !Self.fieldKeys.contains(key) { fail("\(path).\(key)", "unknown key") }
        if field["standard"]?.boolValue == true, let name = field["name"]?.stringValue {
            guard var definition = StandardFields.field(name, of: objectName) else {
                fail("\(path).standard", "\(objectName) has no standard field \(name) in the emulator's catalog (docs/seed-format.md)")
                return nil
            }
            for (key, value) in field where key != "standard" { definition[key] = value }
            field = definition
        }
        guard let name = field["name"]?.stringValue, name.range(of: #"^[A-Za-z][A-Za-z0-9_]*$"#, options: .regularExpression) != nil else {
            fail("\(path).name", "is required: a letter, then letters, digits and underscores (as an API name)")
            return nil
        }
        for key in ["length", "precision", "scale"] {
            guard let value = field[key] else { continue }
            guard case .integer(let number) = value, (0...131_072).contains(number), key != "length" || number > 0 else {
                fail("\(path).\(key)", "must be a whole number (without quotes) from \(key == "length" ? 1 : 0) to 131072, not \(value.jsonString)")
                return nil
            }
        }
        guard let typeName = field["type"]?.stringValue, let type = FieldType(rawValue: typeName), type != .id else {
            fail("\(path).type", "must be one of \(FieldType.allCases.filter { $0 != .id }.map(\.rawValue).joined(separator: ", "))")
            return nil
        }
        return (field, name, type)
    }

    /// The length a field of `type` has when its definition gives none.
    static func defaultLength(of type: FieldType) -> Int {
        switch type {
        case .textarea: return 32768
        case .string, .email, .phone, .url, .picklist, .multipicklist: return 255
        case .reference: return 18
        default: return 0
        }
    }

    /// `OwnerId`: the user who owns the record, the creating user by default.
    static func ownerField() -> FieldSchema {
        var owner = systemFields().first { $0.name == "CreatedById" }!
        owner.name = "OwnerId"
        owner.label = "Owner ID"
        owner.relationshipName = "Owner"
        owner.createable = true
        owner.updateable = true
        return owner
    }

    /// `RecordTypeId`, on objects with record types: the object's first record type by default.
    static func recordTypeField() -> FieldSchema {
        var recordType = systemFields().first { $0.name == "CreatedById" }!
        recordType.name = "RecordTypeId"
        recordType.label = "Record Type ID"
        recordType.referenceTo = "RecordType"
        recordType.referenceTargets = ["RecordType"]
        recordType.relationshipName = "RecordType"
        recordType.createable = true
        recordType.updateable = true
        recordType.nillable = true
        return recordType
    }

    mutating func decodeRecords(_ value: JSONValue?, schema: OrgSchema) -> [SeedRecord] {
        guard let value else { return [] }
        guard let array = value.arrayValue else { fail("records", "must be an array"); return [] }
        var records: [SeedRecord] = []
        var keys = Set<String>()
        for (offset, element) in array.enumerated() {
            let path = "records[\(offset)]"
            guard let record = element.objectValue else { fail(path, "must be an object"); continue }
            for key in record.keys where !["key", "type", "fields"].contains(key) { fail("\(path).\(key)", "unknown key; expected key, type or fields") }
            guard let type = record["type"]?.stringValue, let object = schema.object(type) else {
                fail("\(path).type", "must name an object of the schema")
                continue
            }
            let fields = record["fields"]?.objectValue ?? JSONObject()
            for (name, fieldValue) in fields {
                guard object.field(name) != nil else { fail("\(path).fields.\(name)", "no field \(name) on \(object.name)"); continue }
                if let reference = fieldValue["$ref"]?.stringValue, !keys.contains(reference) {
                    fail("\(path).fields.\(name)", "no earlier record with key \"\(reference)\"")
                }
            }
            for field in object.fields where !field.nillable && field.createable && !field.defaultedOnCreate {
                if fields.first(where: { $0.key.lowercased() == field.name.lowercased() }).map({ $0.value == .null }) ?? true {
                    fail("\(path).fields.\(field.name)", "is required on \(object.name)")
                }
            }
            if let key = record["key"]?.stringValue {
                if !keys.insert(key).inserted { fail("\(path).key", "key \"\(key)\" is used twice") }
            }
            records.append(SeedRecord(key: record["key"]?.stringValue, type: object.name, fields: fields))
        }
        return records
    }

    /// Id, IsDeleted, the audit fields and SystemModstamp, on every object.
    static func systemFields() -> [FieldSchema] {
        func field(_ name: String, _ type: FieldType, label: String, idLookup: Bool = false) -> FieldSchema {
            FieldSchema(name: name, label: label, type: type, length: type == .id || type == .reference ? 18 : 0, precision: 0, scale: 0,
                        nillable: false, createable: false, updateable: false, unique: false, externalId: false, idLookup: idLookup,
                        defaultedOnCreate: true, defaultValue: nil, picklistValues: [], restrictedPicklist: false,
                        referenceTo: nil, relationshipName: nil, childRelationshipName: nil, masterDetail: false,
                        cascadeDelete: false, restrictedDelete: false, custom: false)
        }
        // The audit references point at User, so `SELECT CreatedBy.Name` works as in an org.
        func user(_ name: String, label: String, relationship: String) -> FieldSchema {
            var reference = field(name, .reference, label: label)
            reference.referenceTo = "User"
            reference.referenceTargets = ["User"]
            reference.relationshipName = relationship
            return reference
        }
        return [
            field("Id", .id, label: "Record ID", idLookup: true), field("IsDeleted", .boolean, label: "Deleted"),
            field("CreatedDate", .datetime, label: "Created Date"), user("CreatedById", label: "Created By ID", relationship: "CreatedBy"),
            field("LastModifiedDate", .datetime, label: "Last Modified Date"),
            user("LastModifiedById", label: "Last Modified By ID", relationship: "LastModifiedBy"),
            field("SystemModstamp", .datetime, label: "System Modstamp"),
        ]
    }

    /// Organization (for `SELECT IsSandbox FROM Organization`), User and RecordType, present in every org.
    func builtInObjects() -> [ObjectSchema] {
        func text(_ name: String) -> FieldSchema {
            FieldSchema(name: name, label: name, type: .string, length: 255, precision: 0, scale: 0, nillable: true, createable: false,
                        updateable: false, unique: false, externalId: false, idLookup: false, defaultedOnCreate: false, defaultValue: nil,
                        picklistValues: [], restrictedPicklist: false, referenceTo: nil, relationshipName: nil, childRelationshipName: nil,
                        masterDetail: false, cascadeDelete: false, restrictedDelete: false, custom: false)
        }
        var isSandbox = text("IsSandbox")
        isSandbox.type = .boolean
        isSandbox.length = 0
        var trialExpiration = text("TrialExpirationDate")
        trialExpiration.type = .datetime
        trialExpiration.length = 0
        var username = text("Username")
        username.idLookup = true
        var isActive = text("IsActive")
        isActive.type = .boolean
        isActive.length = 0
        var developerName = text("DeveloperName")
        developerName.length = 80
        return [
            ObjectSchema(name: "Organization", label: "Organization", labelPlural: "Organizations", keyPrefix: "00D", custom: false,
                         fields: Self.systemFields() + [text("Name"), isSandbox, text("OrganizationType"), text("InstanceName"),
                                                         text("NamespacePrefix"), trialExpiration, text("LanguageLocaleKey"),
                                                         text("DefaultLocaleSidKey"), text("TimeZoneSidKey"), text("Country")]),
            ObjectSchema(name: "User", label: "User", labelPlural: "Users", keyPrefix: "005", custom: false,
                         fields: Self.systemFields() + [username, text("Name"), text("Email"), text("Alias"), isActive]),
            ObjectSchema(name: "RecordType", label: "Record Type", labelPlural: "Record Types", keyPrefix: ObjectSchema.recordTypePrefix,
                         custom: false, fields: Self.systemFields() + [text("Name"), developerName, text("SobjectType"), isActive,
                                                                        text("Description"), text("NamespacePrefix")]),
        ] + toolingObjects(text: text, flag: { name in
            var field = text(name)
            field.type = .boolean
            field.length = 0
            return field
        })
    }

    /// The Tooling API objects a client's first queries read: one EntityDefinition per object, and
    /// (empty) ApexClass and InstalledSubscriberPackage.
    func toolingObjects(text: (String) -> FieldSchema, flag: (String) -> FieldSchema) -> [ObjectSchema] {
        var apiVersion = text("ApiVersion")
        apiVersion.type = .double
        apiVersion.length = 0
        let objects = [
            ObjectSchema(name: "EntityDefinition", label: "Entity Definition", labelPlural: "Entity Definitions", keyPrefix: "4ie", custom: false,
                         fields: Self.systemFields() + ["DurableId", "QualifiedApiName", "DeveloperName", "Label", "PluralLabel", "KeyPrefix",
                                                        "NamespacePrefix"].map(text) + ["IsCustomizable", "IsQueryable", "IsCustomSetting"].map(flag)),
            ObjectSchema(name: "ApexClass", label: "Apex Class", labelPlural: "Apex Classes", keyPrefix: "01p", custom: false,
                         fields: Self.systemFields() + ["Name", "NamespacePrefix", "Body", "Status"].map(text) + [apiVersion]),
            ObjectSchema(name: "InstalledSubscriberPackage", label: "Installed Package", labelPlural: "Installed Packages", keyPrefix: "0A3",
                         custom: false, fields: Self.systemFields() + ["SubscriberPackageId", "SubscriberPackageVersionId"].map(text)),
        ]
        return objects.map { object in
            var tooling = object
            tooling.tooling = true
            return tooling
        }
    }
}
