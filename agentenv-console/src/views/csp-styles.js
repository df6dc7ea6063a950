// xterm.js writes its computed rules into <style> elements it creates. The console's Content-Security-Policy allows
// no inline styles, so such elements would be ignored. This routes them through constructable stylesheets instead
// (CSSOM, which the policy does not restrict): every <style> the page creates is a detached stand-in whose text goes
// into a CSSStyleSheet adopted by the document, and removing the stand-in drops that sheet. The console's own styles
// are files, so nothing else creates <style> elements.
let installed = false

export function routeStyleElementsThroughCssom(doc = document) {
  if (installed) return
  installed = true
  const create = doc.createElement.bind(doc)
  doc.createElement = function createElement(name, options) {
    if (String(name).toLowerCase() !== 'style') return create(name, options)
    const stand = create('template')
    const sheet = new CSSStyleSheet()
    let text = ''
    doc.adoptedStyleSheets = [...doc.adoptedStyleSheets, sheet]
    Object.defineProperty(stand, 'textContent', {
      get: () => text,
      set: (value) => {
        text = String(value ?? '')
        sheet.replaceSync(text)
      },
    })
    Object.defineProperty(stand, 'sheet', { get: () => sheet })
    const remove = stand.remove.bind(stand)
    stand.remove = () => {
      doc.adoptedStyleSheets = doc.adoptedStyleSheets.filter((s) => s !== sheet)
      remove()
    }
    return stand
  }
}
