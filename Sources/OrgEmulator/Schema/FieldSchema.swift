import JSON

/// A field's data type, as describe reports it.
public enum FieldType: String, Sendable, CaseIterable {
    case id, string, textarea, email, phone, url, picklist, multipicklist, boolean, int, double, currency, percent,
         date, datetime, reference

    /// The SOAP type describe reports.
    var soapType: String {
        switch self {
        case .id, .reference: return "tns:ID"
        case .boolean: return "xsd:boolean"
        case .int: return "xsd:int"
        case .double, .currency, .percent: return "xsd:double"
        case .date: return "xsd:date"
        case .datetime: return "xsd:dateTime"
        default: return "xsd:string"
        }
    }

    /// `true` for types stored as text.
    var isText: Bool {
        switch self {
        case .string, .textarea, .email, .phone, .url, .picklist, .multipicklist: return true
        default: return false
        }
    }
}

/// One field of an emulated object.
public struct FieldSchema: Sendable {
    public var name: String
    public var label: String
    public var type: FieldType
    /// Maximum characters for text types.
    public var length: Int
    public var precision: Int
    public var scale: Int
    /// `false` when a value is required on create.
    public var nillable: Bool
    public var createable: Bool
    public var updateable: Bool
    public var unique: Bool
    public var externalId: Bool
    /// Usable as the key of an upsert (ids, external ids, and fields like Contact.Email).
    public var idLookup: Bool
    public var defaultedOnCreate: Bool
    public var defaultValue: JSONValue?
    public var picklistValues: [String]
    public var restrictedPicklist: Bool
    /// For references: the parent object (the first, for a polymorphic lookup).
    public var referenceTo: String?
    /// For references: the name of the parent in child-to-parent paths (`Account`).
    public var relationshipName: String?
    /// For references: the name of the children in parent-to-child subqueries (`Contacts`).
    public var childRelationshipName: String?
    /// Master-detail: always cascades and is required.
    public var masterDetail: Bool
    public var cascadeDelete: Bool
    public var restrictedDelete: Bool
    public var custom: Bool
    /// For references: every object the field may point at — several for a polymorphic lookup
    /// (`Task.WhatId` → Account, Opportunity).
    public var referenceTargets: [String] = []
    /// A compound name's parts (Contact.Name from FirstName and LastName): set by the org, read-only.
    public var compound: [String] = []

    /// `true` for required fields a create must supply.
    public var isRequiredOnCreate: Bool { !nillable && createable && !defaultedOnCreate && type != .boolean }
}

/// A relationship seen from the parent, as describe's `childRelationships` lists it.
public struct ChildRelationship: Sendable {
    public var childSObject: String
    public var field: String
    public var relationshipName: String?
    public var cascadeDelete: Bool
    public var restrictedDelete: Bool
}

/// A record type of an object (`RecordType` records; describe's `recordTypeInfos`).
public struct RecordTypeInfo: Sendable {
    public var id: String
    public var developerName: String
    public var name: String
}

/// An emulated object (standard or custom) and its fields.
public struct ObjectSchema: Sendable {
    /// The key prefix of RecordType ids; `012000000000000AAA` is every object's Master record type.
    static let recordTypePrefix = "012"
    static let masterRecordTypeId = "012000000000000AAA"

    public var name: String
    public var label: String
    public var labelPlural: String
    public var keyPrefix: String
    public var custom: Bool
    /// Fields in describe order, system fields included.
    public var fields: [FieldSchema] {
        didSet { derived = Derived(fields) }
    }
    public var childRelationships: [ChildRelationship] = []
    /// The record types besides Master, the first being the default for new records.
    public var recordTypes: [RecordTypeInfo] = []
    /// A Tooling API object (EntityDefinition, ApexClass): served under `/tooling`, left out of
    /// the data API's global describe, search and record counts.
    public var tooling = false
    /// What every record written consults, derived from `fields` once (not a pass over the
    /// fields, copying each, per record).
    private var derived: Derived

    private struct Derived: Sendable {
        /// Where each field sits in `fields`, by its name as written and lower-cased.
        var positions: [String: Int] = [:]
        var defaultsOnCreate: [(name: String, value: JSONValue)] = []
        var requiredOnCreate: [String] = []
        var unique: [String] = []
        var compound: [(name: String, parts: [String])] = []
        var emptyDataValues: [(name: String, value: JSONValue)] = []

        init(_ fields: [FieldSchema]) {
            for (index, field) in fields.enumerated().reversed() {
                positions[field.name.lowercased()] = index
                positions[field.name] = index
            }
            for field in fields {
                if field.defaultedOnCreate, let value = field.defaultValue { defaultsOnCreate.append((field.name, value)) }
                if field.isRequiredOnCreate { requiredOnCreate.append(field.name) }
                if field.unique { unique.append(field.name) }
                if !field.compound.isEmpty { compound.append((field.name, field.compound)) }
                if !OrgEngine.systemFieldNames.contains(field.name) {
                    emptyDataValues.append((field.name, field.type == .boolean ? .bool(false) : .null))
                }
            }
        }
    }

    /// The fields set on create when a record gives no value, with their default values.
    var defaultsOnCreate: [(name: String, value: JSONValue)] { derived.defaultsOnCreate }
    /// The names of the fields a create must give a value (``FieldSchema/isRequiredOnCreate``).
    var requiredOnCreate: [String] { derived.requiredOnCreate }
    /// The names of the unique fields.
    var uniqueFields: [String] { derived.unique }
    /// The compound fields (`Name` of a Contact) with the fields they are made of.
    var compoundFields: [(name: String, parts: [String])] { derived.compound }
    /// Every field but the system ones (which a create sets itself) with the value a new record
    /// holds when given none (`false` for a checkbox).
    var emptyDataValues: [(name: String, value: JSONValue)] { derived.emptyDataValues }

    public init(name: String, label: String, labelPlural: String, keyPrefix: String, custom: Bool, fields: [FieldSchema],
                childRelationships: [ChildRelationship] = [], recordTypes: [RecordTypeInfo] = [], tooling: Bool = false) {
        self.name = name
        self.label = label
        self.labelPlural = labelPlural
        self.keyPrefix = keyPrefix
        self.custom = custom
        self.fields = fields
        self.childRelationships = childRelationships
        self.recordTypes = recordTypes
        self.tooling = tooling
        derived = Derived(fields)
    }

    /// The field named `name`, case-insensitively, as Salesforce matches field names.
    public func field(_ name: String) -> FieldSchema? {
        (derived.positions[name] ?? derived.positions[name.lowercased()]).map { fields[$0] }
    }

    /// The reference field whose relationship name is `name` (`Account` → `AccountId`).
    public func relationship(_ name: String) -> FieldSchema? {
        let lowered = name.lowercased()
        return fields.first { $0.relationshipName?.lowercased() == lowered }
    }

    /// The child relationship named `name` (`Contacts`).
    public func childRelationship(_ name: String) -> ChildRelationship? {
        let lowered = name.lowercased()
        return childRelationships.first { $0.relationshipName?.lowercased() == lowered }
    }
}

/// Every object of the emulated org.
public struct OrgSchema: Sendable {
    public private(set) var objects: [ObjectSchema]
    private var byLowercasedName: [String: Int] = [:]
    private var byPrefix: [String: Int] = [:]

    init(objects: [ObjectSchema]) {
        var linked = objects
        for (parentIndex, parent) in linked.enumerated() {
            linked[parentIndex].childRelationships = objects.flatMap { child in
                child.fields.filter { $0.referenceTargets.contains { $0.lowercased() == parent.name.lowercased() } }.map { field in
                    ChildRelationship(childSObject: child.name, field: field.name, relationshipName: field.childRelationshipName,
                                      cascadeDelete: field.cascadeDelete || field.masterDetail, restrictedDelete: field.restrictedDelete)
                }
            }
        }
        self.objects = linked
        for (index, object) in linked.enumerated() {
            byLowercasedName[object.name.lowercased()] = index
            byPrefix[object.keyPrefix] = index
        }
    }

    /// The object named `name`, case-insensitively.
    public func object(_ name: String) -> ObjectSchema? {
        byLowercasedName[name.lowercased()].map { objects[$0] }
    }

    /// The object whose key prefix starts `id`.
    public func object(forId id: String) -> ObjectSchema? {
        byPrefix[String(id.prefix(3))].map { objects[$0] }
    }
}
