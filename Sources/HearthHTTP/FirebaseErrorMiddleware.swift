import HearthAuth
import HearthDomain
import Hummingbird
import Logging
import NIOCore

/// Turns every error into the Firebase envelope: refused rules and bad input are 4xx with
/// the code the SDKs map; only a fault of Hearth itself is a 5xx (and is logged).
struct FirebaseErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as FirebaseError {
            return JSONResponse.error(error)
        } catch let error as AuthError {
            return JSONResponse.error(FirebaseError(error))
        } catch let error as HTTPError {
            return JSONResponse.error(Self.firebaseError(error))
        } catch is NIOTooManyBytesError {
            return JSONResponse.error(Self.firebaseError(HTTPError(.contentTooLarge)))
        } catch {
            context.logger.error("request failed", metadata: ["error": "\(error)", "path": "\(request.uri.path)"])
            return JSONResponse.error(
                FirebaseError(httpStatus: 500, message: "INTERNAL_ERROR", status: "INTERNAL", reason: "backendError"))
        }
    }

    static func firebaseError(_ error: HTTPError) -> FirebaseError {
        switch error.status {
        case .notFound: .notFound
        case .contentTooLarge:
            FirebaseError(httpStatus: 413, message: "Request payload too large", status: "INVALID_ARGUMENT", reason: "tooLarge")
        case .methodNotAllowed:
            FirebaseError(httpStatus: 405, message: "Method Not Allowed", status: "INVALID_ARGUMENT", reason: "methodNotAllowed")
        default:
            FirebaseError(
                httpStatus: error.status.code, message: error.body ?? error.status.reasonPhrase,
                status: error.status.code >= 500 ? "INTERNAL" : "INVALID_ARGUMENT", reason: "invalid")
        }
    }
}
