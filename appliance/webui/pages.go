package webui

import (
	"fmt"
	"html/template"
	"sync"
	"weak"
)

// pages are the pages' templates (assets/layout.html with one
// assets/page-NAME.html), parsed when a page is asked for and held only
// weakly: a template set is about a thousand small values, and the
// fourteen of them, kept, would be a fifth of a serving box's live heap,
// which every collection walks whether or not anyone opens a page. A page
// asked for again before the next collection is not parsed again.
type pages struct {
	funcs template.FuncMap
	mu    sync.Mutex
	made  map[string]weak.Pointer[template.Template]
}

// get returns page name's template, parsing it if it is not at hand.
func (p *pages) get(name string) (*template.Template, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t := p.made[name].Value(); t != nil {
		return t, nil
	}
	t, err := template.New("layout.html").Funcs(p.funcs).ParseFS(assets, "assets/layout.html", "assets/page-"+name+".html")
	if err != nil {
		return nil, fmt.Errorf("page %s: %w", name, err)
	}
	if p.made == nil {
		p.made = map[string]weak.Pointer[template.Template]{}
	}
	p.made[name] = weak.Make(t)
	return t, nil
}
