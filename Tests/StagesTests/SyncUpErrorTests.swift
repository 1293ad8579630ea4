@testable import Stages
import Testing

/// Bulk results' `sf__Error` read back into code, message and fields.
struct SyncUpErrorTests {
    @Test(arguments: [
        ("REQUIRED_FIELD_MISSING:Required fields are missing: [LastName]:LastName --", "REQUIRED_FIELD_MISSING",
         "Required fields are missing: [LastName]", ["LastName"]),
        ("INVALID_EMAIL_ADDRESS:Email: invalid email address: m.garcia@:Email --", "INVALID_EMAIL_ADDRESS",
         "Email: invalid email address: m.garcia@", ["Email"]),
        ("DUPLICATE_VALUE:duplicate value found: External_Id__c duplicates value on record with id: 001000000000001:External_Id__c --",
         "DUPLICATE_VALUE", "duplicate value found: External_Id__c duplicates value on record with id: 001000000000001", ["External_Id__c"]),
        ("UNABLE_TO_LOCK_ROW:unable to obtain exclusive access to this record: --", "UNABLE_TO_LOCK_ROW",
         "unable to obtain exclusive access to this record", []),
        ("CANNOT_INSERT_UPDATE_ACTIVATE_ENTITY:a trigger failed", "CANNOT_INSERT_UPDATE_ACTIVATE_ENTITY", "a trigger failed", []),
    ])
    func bulkErrorsKeepTheirWholeMessage(text: String, code: String, message: String, fields: [String]) {
        let error = SyncUpError(bulkError: text)
        #expect(error.code == code)
        #expect(error.message == message)
        #expect(error.fields == fields)
    }
}
