// SPDX-License-Identifier: Apache-2.0

// Package checkpointtest is an in-memory storage extension for the tests of
// checkpoints: what a file_storage would keep across a restart, kept in a
// map that outlives the processors the test starts and kills.
package checkpointtest

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
)

// Store is a storage extension whose clients share one map per component.
type Store struct {
	component.StartFunc
	component.ShutdownFunc
	mu   sync.Mutex
	data map[string]map[string][]byte // client name -> key -> value
	// Fail, if set, is returned by every Set.
	Fail error
	// GetFail, if set, is returned by every Get: a disk that cannot be read.
	GetFail error
	// OpenFail, if set, is returned by GetClient: a file that cannot be
	// opened (truncated, corrupt).
	OpenFail error
	// Sets counts the writes.
	Sets int
}

// NewStore is an empty store.
func NewStore() *Store { return &Store{data: map[string]map[string][]byte{}} }

// Host is a host running the store as the extension id.
func (s *Store) Host(id component.ID) component.Host {
	return host{Host: componenttest.NewNopHost(), exts: map[component.ID]component.Component{id: s}}
}

type host struct {
	component.Host
	exts map[component.ID]component.Component
}

func (h host) GetExtensions() map[component.ID]component.Component { return h.exts }

// GetClient is the client of one component.
func (s *Store) GetClient(_ context.Context, kind component.Kind, id component.ID, name string) (storage.Client, error) {
	if s.OpenFail != nil {
		return nil, s.OpenFail
	}
	return &client{s: s, name: kind.String() + "/" + id.String() + "/" + name}, nil
}

// Get is the value a component's client holds under key.
func (s *Store) Get(id component.ID, key string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.data[component.KindProcessor.String()+"/"+id.String()+"/"][key]
}

// Keys are the keys a component's client holds.
func (s *Store) Keys(id component.ID) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var keys []string
	for k := range s.data[component.KindProcessor.String()+"/"+id.String()+"/"] {
		keys = append(keys, k)
	}
	return keys
}

// Put sets the value a component's client holds under key.
func (s *Store) Put(id component.ID, key string, value []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := component.KindProcessor.String() + "/" + id.String() + "/"
	if s.data[name] == nil {
		s.data[name] = map[string][]byte{}
	}
	s.data[name][key] = value
}

type client struct {
	s    *Store
	name string
}

func (c *client) Get(_ context.Context, key string) ([]byte, error) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	if c.s.GetFail != nil {
		return nil, c.s.GetFail
	}
	v := c.s.data[c.name][key]
	if v == nil {
		return nil, nil
	}
	return append([]byte(nil), v...), nil
}

func (c *client) Set(_ context.Context, key string, value []byte) error {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	if c.s.Fail != nil {
		return c.s.Fail
	}
	c.s.Sets++
	if c.s.data[c.name] == nil {
		c.s.data[c.name] = map[string][]byte{}
	}
	c.s.data[c.name][key] = append([]byte(nil), value...)
	return nil
}

func (c *client) Delete(_ context.Context, key string) error {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	delete(c.s.data[c.name], key)
	return nil
}

func (c *client) Batch(ctx context.Context, ops ...*storage.Operation) error {
	for _, op := range ops {
		var err error
		switch op.Type {
		case storage.Get:
			op.Value, err = c.Get(ctx, op.Key)
		case storage.Set:
			err = c.Set(ctx, op.Key, op.Value)
		case storage.Delete:
			err = c.Delete(ctx, op.Key)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *client) Close(context.Context) error { return nil }

// HostWith is a host running the given extensions: a real storage
// extension (file_storage) for a benchmark or an end-to-end test.
func HostWith(exts map[component.ID]component.Component) component.Host {
	return host{Host: componenttest.NewNopHost(), exts: exts}
}
