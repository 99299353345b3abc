[
  { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'a' } },
  null,
  { apiVersion: 'v1', kind: 'List', items: [{ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'b' } }] },
]
