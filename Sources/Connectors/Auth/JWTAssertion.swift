import _CryptoExtras
import Foundation
import JSON

/// Builds the RS256-signed assertion of the OAuth JWT bearer flow (RFC 7523).
enum JWTAssertion {
    /// An assertion for `username` of connected app `clientId`, valid for three minutes.
    static func make(clientId: String, username: String, audience: String, privateKeyFile: String, now: Date = Date())
        throws(OrgClientError) -> String
    {
        guard let pem = try? String(contentsOfFile: privateKeyFile, encoding: .utf8) else {
            throw .invalidConfiguration("\(privateKeyFile): cannot read the JWT private key file")
        }
        let key: _RSA.Signing.PrivateKey
        do {
            key = try _RSA.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw .invalidConfiguration("\(privateKeyFile): not an RSA private key in PEM form")
        }
        let claims = "{\"iss\":\(quoted(clientId)),\"sub\":\(quoted(username)),\"aud\":\(quoted(audience)),\"exp\":\(Int(now.timeIntervalSince1970) + 180)}"
        let signingInput = base64URL(Data(#"{"alg":"RS256"}"#.utf8)) + "." + base64URL(Data(claims.utf8))
        do {
            let signature = try key.signature(for: Data(signingInput.utf8), padding: .insecurePKCS1v1_5)
            return signingInput + "." + base64URL(signature.rawRepresentation)
        } catch {
            throw .invalidConfiguration("\(privateKeyFile): the key cannot sign (\(error))")
        }
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func quoted(_ text: String) -> String {
        JSONValue.string(text).jsonString
    }
}
