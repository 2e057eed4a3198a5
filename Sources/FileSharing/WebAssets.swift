/// The web page's files, `Resources/index.html`, `app.css`, `app.js`,
/// `gallery.js`, `viewer.js` and `gallery.css`,
/// embedded in the binary by SwiftPM (`.embedInCode`): the server needs no
/// resource bundle beside it, and the files stay files for editors, linters
/// and diffs.
enum WebAssets {
    /// The web page served at `/`: it loads `/app.css`, `/gallery.css`, `/app.js`, `/gallery.js` and `/viewer.js`.
    static let html = String(decoding: PackageResources.index_html, as: UTF8.self)
    /// The stylesheet of the web page, served at `/app.css`.
    static let css = String(decoding: PackageResources.app_css, as: UTF8.self)
    /// The script of the web page, served at `/app.js`.
    static let javaScript = String(decoding: PackageResources.app_js, as: UTF8.self)
    /// The gallery view beside the list (a grid of thumbnails), served at `/gallery.js`.
    static let gallery = String(decoding: PackageResources.gallery_js, as: UTF8.self)
    /// The styles of the gallery and the viewer's additions, served at `/gallery.css`.
    static let galleryStyle = String(decoding: PackageResources.gallery_css, as: UTF8.self)
    /// The viewer's Markdown renderer and comic reader, served at `/viewer.js`.
    static let viewer = String(decoding: PackageResources.viewer_js, as: UTF8.self)
    /// The sign-in page (with a users file), served at `/signin`; `<!--message-->` is where a failure is told.
    static let signIn = String(decoding: PackageResources.signin_html, as: UTF8.self)
    /// The share links' script: the page's "Share" action and "Links" dialog, and a link's drop zone.
    static let shares = String(decoding: PackageResources.shares_js, as: UTF8.self)
    /// A read link's folder (`/s/TOKEN`): the page's list, gallery and viewer, read-only, through the link.
    static let linkFolder = String(decoding: PackageResources.link_html, as: UTF8.self)
}
