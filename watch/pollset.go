package watch

// pollSet is poll mode's record of every session directory's mtime. Each
// tick walks it whole and stats up to every entry, so it is laid out for
// that walk: one dense slice in place of a map (ranging a 10,000-entry
// string map cost more than a fifth of an idle tick), each entry carrying
// the name in the form the stat call takes, made once rather than on every
// tick. The index finds an entry by id for the rarer updates.
type pollSet struct {
	idx  map[string]int
	ents []pollEnt
}

type pollEnt struct {
	id   string
	name statName
	half byte // which half of the quiet sessions this is in: kept here, as reading it from id missed the cache
	mtime
}

type mtime struct {
	ns      int64
	recheck bool // the mtime was recent when read: look again on the next tick
}

func newPollSet() pollSet { return pollSet{idx: map[string]int{}} }

func (p *pollSet) len() int { return len(p.ents) }

func (p *pollSet) has(id string) bool {
	_, ok := p.idx[id]
	return ok
}

// set records id's mtime, adding id (whose statName is name) if it is new.
func (p *pollSet) set(id string, name statName, m mtime) {
	if i, ok := p.idx[id]; ok {
		p.ents[i].mtime = m
		return
	}
	p.idx[id] = len(p.ents)
	p.ents = append(p.ents, pollEnt{id: id, name: name, half: id[len(id)-1] & 1, mtime: m})
}

// del forgets id. The last entry takes its place, so a walk from the end
// towards the start may delete the entry it stands on.
func (p *pollSet) del(id string) {
	i, ok := p.idx[id]
	if !ok {
		return
	}
	last := len(p.ents) - 1
	if i != last {
		p.ents[i] = p.ents[last]
		p.idx[p.ents[i].id] = i
	}
	p.ents[last] = pollEnt{}
	p.ents = p.ents[:last]
	delete(p.idx, id)
}

// keep forgets every id for which seen is false.
func (p *pollSet) keep(seen map[string]bool) {
	for i := len(p.ents) - 1; i >= 0; i-- {
		if id := p.ents[i].id; !seen[id] {
			p.del(id)
		}
	}
}
