import JSON

/// The standard fields of the common standard objects, in the seed's field format, as an org's
/// describe reports them. A seed takes them all with `"standard": true` on an object, or one at a
/// time with `{ "name": "Industry", "standard": true }`; keys the seed gives win.
enum StandardFields {
    static func fields(of object: String) -> [JSONObject] {
        catalog[object.lowercased()] ?? []
    }

    static func field(_ name: String, of object: String) -> JSONObject? {
        fields(of: object).first { $0["name"]?.stringValue?.lowercased() == name.lowercased() }
    }

    private static func text(_ name: String, _ length: Int, _ label: String? = nil, type: String = "string") -> JSONObject {
        ["name": .string(name), "type": .string(type), "length": .integer(Int64(length)), "label": .string(label ?? name)]
    }

    private static func picklist(_ name: String, _ values: [String], label: String? = nil, default value: String? = nil,
                                 required: Bool = false) -> JSONObject {
        var field: JSONObject = ["name": .string(name), "type": "picklist", "label": .string(label ?? name),
                                 "picklistValues": .array(values.map(JSONValue.string))]
        if let value { field["default"] = .string(value) }
        if required { field["required"] = true }
        return field
    }

    private static func typed(_ name: String, _ type: String, _ label: String? = nil, required: Bool = false) -> JSONObject {
        var field: JSONObject = ["name": .string(name), "type": .string(type), "label": .string(label ?? name)]
        if required { field["required"] = true }
        return field
    }

    private static func reference(_ name: String, to targets: [String], relationship: String, children: String?,
                                  label: String, cascadeDelete: Bool = false) -> JSONObject {
        var field: JSONObject = ["name": .string(name), "type": "reference", "label": .string(label),
                                 "referenceTo": targets.count == 1 ? .string(targets[0]) : .array(targets.map(JSONValue.string)),
                                 "relationshipName": .string(relationship)]
        if let children { field["childRelationshipName"] = .string(children) }
        if cascadeDelete { field["cascadeDelete"] = true }
        return field
    }

    private static func address(_ prefix: String) -> [JSONObject] {
        [text("\(prefix)Street", 255, "\(prefix) Street", type: "textarea"), text("\(prefix)City", 40, "\(prefix) City"),
         text("\(prefix)State", 80, "\(prefix) State/Province"), text("\(prefix)PostalCode", 20, "\(prefix) Zip/Postal Code"),
         text("\(prefix)Country", 80, "\(prefix) Country")]
    }

    private static let leadSources = ["Web", "Phone Inquiry", "Partner Referral", "Purchased List", "Other"]

    private static let catalog: [String: [JSONObject]] = [
        "account": [
            text("Name", 255, "Account Name").with("required", true),
            text("AccountNumber", 40, "Account Number"), text("Site", 80, "Account Site"),
            picklist("Type", ["Prospect", "Customer - Direct", "Customer - Channel", "Channel Partner / Reseller", "Installation Partner",
                              "Technology Partner", "Other"], label: "Account Type"),
            picklist("Industry", ["Agriculture", "Apparel", "Banking", "Biotechnology", "Chemicals", "Communications", "Construction",
                                  "Consulting", "Education", "Electronics", "Energy", "Engineering", "Entertainment", "Environmental",
                                  "Finance", "Food & Beverage", "Government", "Healthcare", "Hospitality", "Insurance", "Machinery",
                                  "Manufacturing", "Media", "Not For Profit", "Recreation", "Retail", "Shipping", "Technology",
                                  "Telecommunications", "Transportation", "Utilities", "Other"]),
            typed("AnnualRevenue", "currency", "Annual Revenue"), typed("NumberOfEmployees", "int", "Employees"),
            picklist("Rating", ["Hot", "Warm", "Cold"], label: "Account Rating"),
            picklist("Ownership", ["Public", "Private", "Subsidiary", "Other"]),
            text("Phone", 40, "Account Phone", type: "phone"), text("Fax", 40, "Account Fax", type: "phone"),
            text("Website", 255, type: "url"), text("Sic", 20, "SIC Code"), text("TickerSymbol", 20, "Ticker Symbol"),
            text("Description", 32000, "Account Description", type: "textarea"),
            reference("ParentId", to: ["Account"], relationship: "Parent", children: "ChildAccounts", label: "Parent Account ID"),
        ] + address("Billing") + address("Shipping"),
        "contact": [
            picklist("Salutation", ["Mr.", "Ms.", "Mrs.", "Dr.", "Prof."]),
            text("FirstName", 40, "First Name"), text("LastName", 80, "Last Name").with("required", true),
            ["name": "Name", "type": "string", "length": 121, "label": "Full Name", "compound": ["FirstName", "LastName"]],
            text("Title", 128), text("Department", 80),
            text("Email", 80, type: "email").with("idLookup", true),
            text("Phone", 40, "Business Phone", type: "phone"), text("MobilePhone", 40, "Mobile Phone", type: "phone"),
            text("HomePhone", 40, "Home Phone", type: "phone"), text("Fax", 40, "Business Fax", type: "phone"),
            typed("Birthdate", "date"), picklist("LeadSource", leadSources, label: "Lead Source"),
            typed("HasOptedOutOfEmail", "boolean", "Email Opt Out"), typed("DoNotCall", "boolean", "Do Not Call"),
            text("Description", 32000, "Contact Description", type: "textarea"),
            reference("AccountId", to: ["Account"], relationship: "Account", children: "Contacts", label: "Account ID"),
            reference("ReportsToId", to: ["Contact"], relationship: "ReportsTo", children: nil, label: "Reports To ID"),
        ] + address("Mailing"),
        "opportunity": [
            text("Name", 120, "Opportunity Name").with("required", true),
            picklist("StageName", ["Prospecting", "Qualification", "Needs Analysis", "Value Proposition", "Id. Decision Makers",
                                   "Perception Analysis", "Proposal/Price Quote", "Negotiation/Review", "Closed Won", "Closed Lost"],
                     label: "Stage", required: true),
            typed("CloseDate", "date", "Close Date", required: true), typed("Amount", "currency"),
            typed("Probability", "percent", "Probability (%)"),
            picklist("Type", ["Existing Customer - Upgrade", "Existing Customer - Replacement", "Existing Customer - Downgrade", "New Customer"],
                     label: "Opportunity Type"),
            picklist("LeadSource", leadSources, label: "Lead Source"), text("NextStep", 255, "Next Step"),
            picklist("ForecastCategoryName", ["Omitted", "Pipeline", "Best Case", "Commit", "Closed"], label: "Forecast Category"),
            text("Description", 32000, type: "textarea"),
            reference("AccountId", to: ["Account"], relationship: "Account", children: "Opportunities", label: "Account ID"),
        ],
        "case": [
            text("Subject", 255), text("Description", 32000, type: "textarea"),
            picklist("Status", ["New", "Working", "Escalated", "Closed"], default: "New"),
            picklist("Priority", ["High", "Medium", "Low"], default: "Medium"),
            picklist("Origin", ["Phone", "Email", "Web"], label: "Case Origin"),
            picklist("Type", ["Mechanical", "Electrical", "Electronic", "Structural", "Other"], label: "Case Type"),
            picklist("Reason", ["Installation", "Equipment Complexity", "Performance", "Breakdown", "Equipment Design", "Feedback", "Other"],
                     label: "Case Reason"),
            text("SuppliedName", 80, "Web Name"), text("SuppliedEmail", 80, "Web Email", type: "email"),
            text("SuppliedPhone", 40, "Web Phone"),
            reference("AccountId", to: ["Account"], relationship: "Account", children: "Cases", label: "Account ID"),
            reference("ContactId", to: ["Contact"], relationship: "Contact", children: "Cases", label: "Contact ID"),
            reference("ParentId", to: ["Case"], relationship: "Parent", children: "Cases", label: "Parent Case ID"),
        ],
        "task": [
            text("Subject", 255),
            picklist("Status", ["Not Started", "In Progress", "Completed", "Waiting on someone else", "Deferred"], default: "Not Started",
                     required: true),
            picklist("Priority", ["High", "Normal", "Low"], default: "Normal", required: true),
            typed("ActivityDate", "date", "Due Date Only"), text("Description", 32000, "Comments", type: "textarea"),
            picklist("TaskSubtype", ["Task", "Email", "Call"], label: "Task Subtype"),
            reference("WhatId", to: ["Account", "Opportunity", "Case"], relationship: "What", children: "Tasks", label: "Related To ID"),
            reference("WhoId", to: ["Contact"], relationship: "Who", children: "Tasks", label: "Name ID"),
        ],
    ]
}

private extension JSONObject {
    func with(_ key: String, _ value: JSONValue) -> JSONObject {
        var copy = self
        copy[key] = value
        return copy
    }
}
