/// The web page's files, `Resources/index.html`, `app.css` and `app.js`,
/// embedded in the binary by SwiftPM (`.embedInCode`): the server needs no
/// resource bundle beside it, and the files stay files for editors, linters
/// and diffs.
enum WebAssets {
    /// The web page served at `/`: it loads `/app.css` and `/app.js`.
    static let html = String(decoding: PackageResources.index_html, as: UTF8.self)
    /// The stylesheet of the web page, served at `/app.css`.
    static let css = String(decoding: PackageResources.app_css, as: UTF8.self)
    /// The script of the web page, served at `/app.js`.
    static let javaScript = String(decoding: PackageResources.app_js, as: UTF8.self)
    /// The sign-in page (with a users file), served at `/signin`; `<!--message-->` is where a failure is told.
    static let signIn = String(decoding: PackageResources.signin_html, as: UTF8.self)
    /// The share links' script: the page's "Share" action and "Links" dialog, and a link's drop zone.
    static let shares = String(decoding: PackageResources.shares_js, as: UTF8.self)
}
