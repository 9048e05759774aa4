package joplinfake

import (
	"net/http"
	"strconv"
)

// Item change types, as models/ItemChange.ts numbers them.
const (
	changeCreate = 1
	changeUpdate = 2
	changeDelete = 3
)

// itemChange is one row of the item_changes table. Joplin records one for
// every note save and delete (trashing is a save); tag links, notebooks,
// tags and resources are not recorded.
type itemChange struct {
	ID          int64  `json:"id"`
	ItemType    int    `json:"item_type"`
	ItemID      string `json:"item_id"`
	Type        int    `json:"type"`
	CreatedTime int64  `json:"created_time"`
}

// noteChanged appends a note change to the change log.
func (s *Server) noteChanged(id string, typ int) {
	s.changes = append(s.changes, itemChange{
		ID: int64(len(s.changes) + 1), ItemType: 1, ItemID: id, Type: typ, CreatedTime: s.lastTime,
	})
}

// routeEvents is routes/events.ts: without ?cursor it answers the last
// change id as the cursor and no items; with one, up to 100 changes after
// it, has_more when the page is full, and the id of the last change given
// (or the cursor itself) as the next cursor, always as a string.
func (s *Server) routeEvents(req *request, id, _ string, _ []string) (any, *apiError) {
	if req.method != http.MethodGet {
		return nil, nil
	}
	if id != "" {
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil || n < 1 || n > int64(len(s.changes)) {
			return nil, errNotFound(frameDefaultMethod)
		}
		return s.changes[n-1], nil
	}
	raw, has := req.query["cursor"]
	if !has {
		return map[string]any{"items": []itemChange{}, "has_more": false, "cursor": strconv.Itoa(len(s.changes))}, nil
	}
	cursor, err := strconv.ParseFloat(raw[0], 64)
	if err != nil {
		return nil, errBadRequest("Invalid cursor: "+raw[0], frameDefaultMethod)
	}
	items := []itemChange{}
	for _, c := range s.changes {
		if float64(c.ID) > cursor && len(items) < 100 {
			items = append(items, c)
		}
	}
	next := raw[0]
	if len(items) > 0 {
		next = strconv.FormatInt(items[len(items)-1].ID, 10)
	}
	return map[string]any{"items": items, "has_more": len(items) >= 100, "cursor": next}, nil
}
