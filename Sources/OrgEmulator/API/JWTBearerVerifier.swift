import _CryptoExtras
import Foundation
import JSON
import X509

/// Checks a JWT bearer assertion (RFC 7523) as Salesforce does: RS256-signed by the key of the
/// certificate uploaded for the connected app, `iss` the client id, `sub` the username, `aud` the
/// login URL, and not expired.
struct JWTBearerVerifier {
    /// The audiences an org accepts.
    let audiences: [String]
    /// Now, in epoch seconds.
    let now: Int64

    /// The user the assertion authenticates, or the OAuth error description.
    func verify(_ assertion: String, users: [OrgUser]) -> Result<OrgUser, JWTRejection> {
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let headerData = Self.base64URLDecode(parts[0]), let payloadData = Self.base64URLDecode(parts[1]),
              let signature = Self.base64URLDecode(parts[2]),
              let header = try? JSONParser.parse(headerData).value, let payload = try? JSONParser.parse(payloadData).value
        else { return .failure(JWTRejection("invalid assertion")) }
        guard header["alg"] == "RS256" else { return .failure(JWTRejection("invalid assertion: alg must be RS256")) }
        guard let issuer = payload["iss"]?.stringValue, let subject = payload["sub"]?.stringValue else {
            return .failure(JWTRejection("invalid assertion: iss and sub are required"))
        }
        guard let user = users.first(where: { $0.clientId == issuer && $0.username == subject }) else {
            return .failure(JWTRejection("user hasn't approved this consumer"))
        }
        guard let pem = user.jwtCertificate else { return .failure(JWTRejection("user hasn't approved this consumer")) }
        let audience = payload["aud"]?.stringValue ?? payload["aud"]?.arrayValue?.first?.stringValue ?? ""
        guard audiences.contains(audience) else { return .failure(JWTRejection("audience is invalid")) }
        guard let expiry = payload["exp"]?.integerValue, expiry > now else { return .failure(JWTRejection("expired authorization code")) }
        do {
            let certificate = try Certificate(pemEncoded: pem)
            guard let key = _RSA.Signing.PublicKey(certificate.publicKey) else { return .failure(JWTRejection("invalid assertion: certificate key is not RSA")) }
            let signed = Data((parts[0] + "." + parts[1]).utf8)
            guard key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: signed, padding: .insecurePKCS1v1_5) else {
                return .failure(JWTRejection("invalid assertion: signature does not verify"))
            }
        } catch {
            return .failure(JWTRejection("invalid assertion: the connected app's certificate cannot be read"))
        }
        return .success(user)
    }

    static func base64URLDecode(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}

/// Why an assertion was refused, as the `error_description` of an `invalid_grant`.
struct JWTRejection: Error {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}
