{ team: 'payments' }
