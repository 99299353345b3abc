{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { token: importstr '/etc/hostname' } }
